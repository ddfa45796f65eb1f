package backend

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/google/uuid"
)

// Store is a Client that keeps the networks in memory. It is safe for
// concurrent use. A Store made by OpenStore also writes every change to a
// file before the call returns, so a new Store on the same file, after a
// restart or a crash, starts where the old one stopped.
type Store struct {
	mu       sync.Mutex
	path     string             // "" for memory only
	networks map[string]Network // by ID
}

var _ Client = &Store{}

// NewMemoryStore returns an empty Store that keeps nothing on disk.
func NewMemoryStore() *Store {
	return &Store{networks: map[string]Network{}}
}

// OpenStore returns a Store that persists to path, loading the networks
// already there. A missing file is an empty backend.
func OpenStore(path string) (*Store, error) {
	s := &Store{path: path, networks: map[string]Network{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	var state stateFile
	if err := json.Unmarshal(data, &state); err != nil {
		return nil, fmt.Errorf("reading state file %s: %w", path, err)
	}
	for _, n := range state.Networks {
		s.networks[n.ID] = n
	}
	return s, nil
}

// stateFile is the state file's format: Neutron's list response.
type stateFile struct {
	Networks []Network `json:"networks"`
}

func (s *Store) List(_ context.Context, name string) ([]Network, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Network
	for _, n := range s.networks {
		if name == "" || n.Name == name {
			out = append(out, n)
		}
	}
	sortByName(out)
	return out, nil
}

func (s *Store) Get(_ context.Context, id string) (Network, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.networks[id]
	if !ok {
		return Network{}, fmt.Errorf("%w: no network with id %q", ErrNotFound, id)
	}
	return n, nil
}

func (s *Store) Create(_ context.Context, n Network) (Network, error) {
	if err := Validate(n); err != nil {
		return Network{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkNameFree(n.Name, ""); err != nil {
		return Network{}, err
	}
	n.ID = uuid.NewString()
	next := maps.Clone(s.networks)
	next[n.ID] = n
	return n, s.commit(next)
}

func (s *Store) Update(_ context.Context, n Network) (Network, error) {
	if err := Validate(n); err != nil {
		return Network{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.networks[n.ID]; !ok {
		return Network{}, fmt.Errorf("%w: no network with id %q", ErrNotFound, n.ID)
	}
	if err := s.checkNameFree(n.Name, n.ID); err != nil {
		return Network{}, err
	}
	next := maps.Clone(s.networks)
	next[n.ID] = n
	return n, s.commit(next)
}

func (s *Store) Delete(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.networks[id]; !ok {
		return fmt.Errorf("%w: no network with id %q", ErrNotFound, id)
	}
	next := maps.Clone(s.networks)
	delete(next, id)
	return s.commit(next)
}

// checkNameFree fails if a network other than the one with ID self is called name.
func (s *Store) checkNameFree(name, self string) error {
	for _, n := range s.networks {
		if n.Name == name && n.ID != self {
			return fmt.Errorf("%w: %q has id %s", ErrConflict, name, n.ID)
		}
	}
	return nil
}

// commit makes next the current state: on disk first, then in memory, so
// that a failed write leaves both as they were.
func (s *Store) commit(next map[string]Network) error {
	if s.path != "" {
		state := stateFile{Networks: []Network{}} // [] rather than null when empty
		state.Networks = slices.AppendSeq(state.Networks, maps.Values(next))
		sortByName(state.Networks)
		if err := writeFileAtomic(s.path, state); err != nil {
			return fmt.Errorf("saving state: %w", err)
		}
	}
	s.networks = next
	return nil
}

// writeFileAtomic writes v as JSON to a temporary file next to path, flushes
// it to disk and renames it over path. A rename within a directory is atomic,
// so a reader (or the next start after a crash) sees the old file or the new
// one, never half of one.
func writeFileAtomic(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once the rename has happened
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	// Flush the directory too, so that the rename itself survives a crash.
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func sortByName(networks []Network) {
	slices.SortFunc(networks, func(a, b Network) int { return cmp.Compare(a.Name, b.Name) })
}
