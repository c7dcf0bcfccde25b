// Package eino connects toolmw to CloudWeGo Eino.
package eino
