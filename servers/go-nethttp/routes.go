package main

import (
	"net/http"

	"callbench/goshared/workloads"
)

// routes maps the contract's endpoints. Each path answers one method; any
// other method gets 405, and any other path 404, both with the error body.
func routes(users *workloads.UserStore) http.Handler {
	h := &handlers{users: users}
	mux := http.NewServeMux()
	route(mux, http.MethodPut, "/auth/{id}", h.auth)
	route(mux, http.MethodGet, "/students", h.students)
	route(mux, http.MethodPost, "/cars", h.cars)
	route(mux, http.MethodGet, "/life/setup", h.lifeSetup)
	route(mux, http.MethodPost, "/life/step", h.lifeStep)
	route(mux, http.MethodPost, "/echo", h.echo)
	route(mux, http.MethodPost, "/records/batch", h.recordsBatch)
	route(mux, http.MethodPost, "/records/upload", h.recordsUpload)
	route(mux, http.MethodGet, "/records", h.recordsDownload)
	route(mux, http.MethodGet, "/health", h.health)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, http.StatusNotFound, "NOT_FOUND", "no such route")
	})
	return mux
}

// route registers "METHOD path" and, under the same path without a method (a
// less specific pattern), the 405 for every other method: ServeMux's own 405
// is plain text.
func route(mux *http.ServeMux, method, path string, handler http.HandlerFunc) {
	mux.HandleFunc(method+" "+path, handler)
	allow := method
	if method == http.MethodGet {
		allow += ", " + http.MethodHead // a GET pattern also serves HEAD
	}
	mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		writeError(w, r, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "method not allowed")
	})
}
