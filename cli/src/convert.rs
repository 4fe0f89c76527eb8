//! `convert`: a topology document from what a real system reports, through the core's
//! import operations (`import_redis_cluster_shards`, `import_redis_cluster_slots`,
//! `import_couchbase_config`, `import_cassandra_ring`).

use std::path::Path;

use serde_json::json;
use shardroute::{ops, Topology};

use crate::input::{write_output, Failure, Input, Outcome};
use crate::Source;

pub fn convert(from: Source, input: &Input, epoch: Option<u64>, out: Option<&Path>) -> Outcome {
    let dump = input.json()?;
    let operation = match from {
        Source::RedisShards => json!({"op": "import_redis_cluster_shards", "reply": dump}),
        Source::RedisSlots => json!({"op": "import_redis_cluster_slots", "reply": dump}),
        Source::Couchbase => json!({"op": "import_couchbase_config", "config": dump}),
        Source::Cassandra => json!({"op": "import_cassandra_ring", "tokens": dump}),
    };
    // The imports replace a topology's content; they start from an empty-looking one at
    // epoch 0, so the result has epoch 1 (a Couchbase config brings its own revision).
    let start = Topology::from_value(&json!({"format": "shardroute/1", "epoch": 0,
        "nodes": [{"id": "shardroute-convert-placeholder"}], "strategy": {"type": "jump"}}))
    .map_err(Failure::input)?;
    let result = ops::apply(&start, &operation).map_err(|err| Failure::input(format!("{}: {err}", input.name())))?;
    let mut topology = Topology::from_value(&result["topology"]).map_err(Failure::input)?;
    if let Some(epoch) = epoch {
        topology.epoch = epoch;
    }
    let document = serde_json::to_string_pretty(&topology.to_value()).unwrap_or_default() + "\n";
    write_output(out.unwrap_or(Path::new("-")), &document)
}
