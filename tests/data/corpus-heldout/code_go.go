package shortener

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// ErrNotFound is returned when a short code has no target.
var ErrNotFound = errors.New("short code not found")

// Link is one shortened URL and its usage counters.
type Link struct {
	Code      string    `json:"code"`
	Target    string    `json:"target"`
	CreatedAt time.Time `json:"created_at"`
	Hits      int64     `json:"hits"`
}

// Store keeps links in memory; a real deployment would back it with a database.
type Store struct {
	mu    sync.RWMutex
	links map[string]*Link
}

func NewStore() *Store {
	return &Store{links: make(map[string]*Link)}
}

func newCode() (string, error) {
	buf := make([]byte, 6)
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("reading random bytes: %w", err)
	}
	return strings.TrimRight(base64.URLEncoding.EncodeToString(buf), "="), nil
}

// Shorten validates target and stores it under a fresh code.
func (s *Store) Shorten(ctx context.Context, target string) (*Link, error) {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("invalid target %q", target)
	}
	for i := 0; i < 5; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		code, err := newCode()
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		if _, taken := s.links[code]; !taken {
			link := &Link{Code: code, Target: u.String(), CreatedAt: time.Now().UTC()}
			s.links[code] = link
			s.mu.Unlock()
			return link, nil
		}
		s.mu.Unlock()
	}
	return nil, errors.New("could not find a free code after 5 tries")
}

// Resolve returns the target for code and counts the hit.
func (s *Store) Resolve(code string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	link, ok := s.links[code]
	if !ok {
		return "", ErrNotFound
	}
	link.Hits++
	return link.Target, nil
}

// Handler redirects GET /{code} and accepts POST / with a form field "url".
func (s *Store) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			target, err := s.Resolve(strings.TrimPrefix(r.URL.Path, "/"))
			if errors.Is(err, ErrNotFound) {
				http.NotFound(w, r)
				return
			}
			http.Redirect(w, r, target, http.StatusFound)
		case http.MethodPost:
			link, err := s.Shorten(r.Context(), r.FormValue("url"))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			fmt.Fprintf(w, "https://sho.rt/%s\n", link.Code)
		default:
			w.Header().Set("Allow", "GET, POST")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
	})
}
