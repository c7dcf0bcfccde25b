// Package genkit connects toolmw to Genkit Go.
package genkit
