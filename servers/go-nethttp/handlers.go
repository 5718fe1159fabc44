package main

import (
	"net/http"
	"strconv"

	"callbench/goshared/workloads"
)

// handlers call the workloads inline, on the goroutine of the request (even
// per-request auth, which reads the users file): GOMAXPROCS bounds the threads.
type handlers struct {
	users *workloads.UserStore
}

// Request bodies: a pointer is a field the contract requires (absent or null: 400).
type authBody struct {
	Password *string `json:"password"`
}

type stepBody struct {
	Ntimes *uint32           `json:"ntimes"`
	Board  *[]workloads.Cell `json:"board"`
}

func (h *handlers) auth(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		badRequest(w, r, "the user id must be a 64-bit integer")
		return
	}
	var body authBody
	if !decodeJSON(w, r, &body) {
		return
	}
	if body.Password == nil {
		badRequest(w, r, "password is required")
		return
	}
	reply, err := h.users.Test(id, *body.Password)
	if err != nil {
		writeWorkloadError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, reply)
}

func (h *handlers) students(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, r, http.StatusOK, workloads.ListStudents())
}

func (h *handlers) cars(w http.ResponseWriter, r *http.Request) {
	var message workloads.CarMessage
	if !decodeJSON(w, r, &message) {
		return
	}
	if err := workloads.ValidateCar(&message); err != nil {
		writeWorkloadError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, &message)
}

func (h *handlers) lifeSetup(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, r, http.StatusOK, workloads.LifeSetup())
}

func (h *handlers) lifeStep(w http.ResponseWriter, r *http.Request) {
	var body stepBody
	if !decodeJSON(w, r, &body) {
		return
	}
	if body.Ntimes == nil || body.Board == nil {
		badRequest(w, r, "ntimes and board are required")
		return
	}
	board, err := workloads.LifeStep(*body.Board, *body.Ntimes)
	if err != nil {
		writeWorkloadError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, board)
}

func (h *handlers) echo(w http.ResponseWriter, r *http.Request) {
	var message workloads.EchoMessage
	if !decodeJSON(w, r, &message) {
		return
	}
	// encoding/json leaves a slice nil only when the field is absent or null ([] is empty, not nil).
	if message.Records == nil {
		badRequest(w, r, "records is required")
		return
	}
	if err := workloads.Echo(&message); err != nil {
		writeWorkloadError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, &message)
}

var serving = []byte(`{"status":"SERVING"}`)

func (h *handlers) health(w http.ResponseWriter, r *http.Request) {
	writeBody(w, r, http.StatusOK, serving)
}
