package concretepointer

import "context"

//go:generate r4cgen -type Client

// Client is a concrete type with a wrapped pointer-receiver method: the wrapper holds a *Client.
type Client struct{ n int }

//r4c:adaptivelimit
func (c *Client) Inc(ctx context.Context) (int, error) { c.n++; return c.n, nil }

//r4c:bulkhead maxConcurrent=2
func (c Client) Get(ctx context.Context) (int, error) { return c.n, nil }

// Reset has no directive.
func (c *Client) Reset() { c.n = 0 }
