//go:build toolmwdeps

// This file pins the layers' dependencies while they are being written; it
// is removed once each layer imports its own.
package toolmw

import (
	_ "github.com/rs/zerolog"
	_ "github.com/sony/gobreaker/v2"
	_ "go.opentelemetry.io/otel"
	_ "go.opentelemetry.io/otel/metric"
	_ "go.opentelemetry.io/otel/sdk/metric"
	_ "go.opentelemetry.io/otel/sdk/trace"
	_ "go.opentelemetry.io/otel/trace"
	_ "go.uber.org/goleak"
	_ "golang.org/x/time/rate"
)
