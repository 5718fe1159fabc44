package dev.callbench.seed003;

import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The article's REST client: one Spring WebFlux WebClient, each call made blocking with
 * {@code .block()}, the answer read into the Java object. WebClient's defaults are kept (Reactor
 * Netty's connection pool: the connection stays open between calls).
 */
final class RestCaller implements Main.Caller {
    private final WebClient client;

    RestCaller(String target) {
        client = WebClient.create(target);
    }

    @Override
    public boolean call(Cars.Car car) {
        Cars.Car answer = client.post()
                .uri("/cars")
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(car)
                .retrieve()
                .bodyToMono(Cars.Car.class)
                .block();
        return car.equals(answer);
    }

    @Override
    public void close() {}
}
