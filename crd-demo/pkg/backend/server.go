package backend

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"k8s.io/klog/v2"
)

// NewHandler serves store over HTTP:
//
//	GET    /v2.0/networks[?name=NAME]  200 {"networks": [...]}
//	POST   /v2.0/networks              201 {"network": {...}}    body {"network": {name, cidr, gateway_ip, description}}
//	GET    /v2.0/networks/{id}         200 {"network": {...}}
//	PUT    /v2.0/networks/{id}         200 {"network": {...}}    body {"network": {fields to change}}
//	DELETE /v2.0/networks/{id}         204
//	GET    /healthz                    200 ok
//
// Errors are 400 (invalid network or body), 404 (no such network), 409
// (name taken) and 413 (a body over MaxBodyBytes). Every request is logged at -v=2.
func NewHandler(store Client, logger klog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v2.0/networks", func(w http.ResponseWriter, r *http.Request) {
		networks, err := store.List(r.Context(), r.URL.Query().Get("name"))
		if err != nil {
			writeError(w, err)
			return
		}
		if networks == nil {
			networks = []Network{} // [] rather than null
		}
		writeJSON(w, http.StatusOK, networksBody{Networks: networks})
	})
	mux.HandleFunc("POST /v2.0/networks", func(w http.ResponseWriter, r *http.Request) {
		var body networkBody
		if err := decode(w, r, &body); err != nil {
			writeError(w, err)
			return
		}
		body.Network.ID = "" // the backend picks the ID
		created, err := store.Create(r.Context(), body.Network)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusCreated, networkBody{Network: created})
	})
	mux.HandleFunc("GET /v2.0/networks/{id}", func(w http.ResponseWriter, r *http.Request) {
		n, err := store.Get(r.Context(), r.PathValue("id"))
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, networkBody{Network: n})
	})
	mux.HandleFunc("PUT /v2.0/networks/{id}", func(w http.ResponseWriter, r *http.Request) {
		// As in Neutron, PUT changes only the fields it is given: decode them
		// over the stored network.
		n, err := store.Get(r.Context(), r.PathValue("id"))
		if err != nil {
			writeError(w, err)
			return
		}
		body := networkBody{Network: n}
		if err := decode(w, r, &body); err != nil {
			writeError(w, err)
			return
		}
		body.Network.ID = n.ID // the ID in the path wins
		updated, err := store.Update(r.Context(), body.Network)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, networkBody{Network: updated})
	})
	mux.HandleFunc("DELETE /v2.0/networks/{id}", func(w http.ResponseWriter, r *http.Request) {
		if err := store.Delete(r.Context(), r.PathValue("id")); err != nil {
			writeError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	return logRequests(mux, logger)
}

// MaxBodyBytes bounds a request body: a network is a few hundred bytes, and
// without a bound one request of 64 MiB made the backend allocate 931 MiB.
const MaxBodyBytes = 1 << 20

// errTooLarge answers 413 Request Entity Too Large.
var errTooLarge = errors.New("request body too large")

// decode reads one JSON value from the body into v, refusing fields the API
// does not have, anything after the value, and bodies over MaxBodyBytes.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		// Decode stops at the value's end: read on, to see trailing data.
		var extra json.RawMessage
		if e := dec.Decode(&extra); e != io.EOF {
			err = fmt.Errorf("unexpected data after the JSON value (%v)", e)
			if tooLarge := new(http.MaxBytesError); errors.As(e, &tooLarge) {
				err = e
			}
		}
	}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return fmt.Errorf("%w: at most %d bytes", errTooLarge, tooLarge.Limit)
	}
	if err != nil {
		return fmt.Errorf("%w: request body: %v", ErrInvalid, err)
	}
	return nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError maps the Client errors to HTTP status codes and Neutron's error types.
func writeError(w http.ResponseWriter, err error) {
	code, typ := http.StatusInternalServerError, "InternalError"
	switch {
	case errors.Is(err, ErrInvalid):
		code, typ = http.StatusBadRequest, "BadRequest"
	case errors.Is(err, ErrNotFound):
		code, typ = http.StatusNotFound, "NetworkNotFound"
	case errors.Is(err, ErrConflict):
		code, typ = http.StatusConflict, "NetworkNameConflict"
	case errors.Is(err, errTooLarge):
		code, typ = http.StatusRequestEntityTooLarge, "RequestEntityTooLarge"
	}
	var body errorBody
	body.NeutronError.Type = typ
	body.NeutronError.Message = err.Error()
	writeJSON(w, code, body)
}

// statusRecorder remembers the status code a handler wrote, for the log.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.code = code
	s.ResponseWriter.WriteHeader(code)
}

func logRequests(next http.Handler, logger klog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(rec, r)
		logger.V(2).Info("Request", "method", r.Method, "url", r.URL.String(), "status", rec.code)
	})
}
