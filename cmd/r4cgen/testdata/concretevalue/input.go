package concretevalue

import "context"

//go:generate r4cgen -type Client

// Client is a concrete type whose wrapped methods have value receivers: the wrapper holds a
// Client.
type Client struct{ base string }

//r4c:adaptivelimit maxLimit=30
func (c Client) Get(ctx context.Context, path string) (string, error) { return c.base + path, nil }

// Name has no directive.
func (c Client) Name() string { return c.base }

// reset has a pointer receiver: not in Client's method set, so not wrapped.
func (c *Client) reset() { c.base = "" }
