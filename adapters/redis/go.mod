module github.com/toolmw/toolmw/adapters/redis

go 1.26.0

replace github.com/toolmw/toolmw => ../..

require (
	github.com/redis/go-redis/v9 v9.23.0
	github.com/toolmw/toolmw v0.0.0-00010101000000-000000000000
	go.uber.org/goleak v1.3.0
	golang.org/x/time v0.15.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.14.0 // indirect
)
