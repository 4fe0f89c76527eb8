module shardroute-ffi-bench

go 1.19

require github.com/shardroute/shardroute/bindings-go v0.0.0

replace github.com/shardroute/shardroute/bindings-go => ../../../bindings-go
