package dev.callbench.spring;

import dev.callbench.workloads.Auth;
import dev.callbench.workloads.Cars;
import dev.callbench.workloads.Echo;
import dev.callbench.workloads.Life;
import dev.callbench.workloads.Students;
import dev.callbench.workloads.UserStore;
import java.util.Map;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The contract's routes: each handler calls its workload. A body must be {@code application/json} (else 415);
 * errors become statuses in {@link ApiErrors}.
 */
@RestController
class ApiController {
    private static final String JSON = MediaType.APPLICATION_JSON_VALUE;
    private static final Map<String, String> SERVING = Map.of("status", "SERVING");

    private final UserStore users;

    ApiController(UserStore users) {
        this.users = users;
    }

    /** Runs on the request thread even in per-request mode (file read per call): those are the threads measured. */
    @PutMapping(path = "/auth/{id}", consumes = JSON)
    Auth.Response auth(@PathVariable("id") long id, @RequestBody Auth.Body body) {
        return users.test(id, body.password());
    }

    @GetMapping("/students")
    Students.ListResponse students() {
        return Students.list();
    }

    @PostMapping(path = "/cars", consumes = JSON)
    Cars.Message cars(@RequestBody Cars.Message message) {
        return Cars.send(message);
    }

    @GetMapping("/life/setup")
    Life.Board lifeSetup() {
        return Life.setup();
    }

    @PostMapping(path = "/life/step", consumes = JSON)
    Life.Board lifeStep(@RequestBody Life.StepRequest request) {
        return Life.step(request.board(), request.ntimes());
    }

    @PostMapping(path = "/echo", consumes = JSON)
    Echo.Message echo(@RequestBody Echo.Message message) {
        return Echo.echo(message);
    }

    @GetMapping("/health")
    Map<String, String> health() {
        return SERVING;
    }
}
