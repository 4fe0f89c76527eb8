module github.com/shardroute/shardroute/bindings-go

go 1.19
