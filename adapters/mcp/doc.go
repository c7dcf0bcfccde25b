// Package mcp puts toolmw on both sides of the Model Context Protocol,
// with the official Go SDK (github.com/modelcontextprotocol/go-sdk).
package mcp
