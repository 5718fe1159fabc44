// Command grpc-gateway-route-guide is grpc-gateway's reverse proxy for route_guide_http.proto: REST
// calls in, gRPC calls to route_guide_server out, as grpc-gateway's documentation sets one up.
//
//	grpc-gateway-route-guide -listen 127.0.0.1:8081 -grpc 127.0.0.1:10000
package main

import (
	"context"
	"flag"
	"log"
	"net/http"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"callbench/grpc-gateway-route-guide/routeguide"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8081", "where the REST side listens")
	backend := flag.String("grpc", "127.0.0.1:10000", "the gRPC server (route_guide_server)")
	flag.Parse()
	mux := runtime.NewServeMux()
	opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if err := routeguide.RegisterRouteGuideHandlerFromEndpoint(context.Background(), mux, *backend, opts); err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s, calling %s", *listen, *backend)
	log.Fatal(http.ListenAndServe(*listen, mux))
}
