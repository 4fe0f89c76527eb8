// shardroute-wasm/http against hostile topology servers (issue 34, finding 4): the suite of
// the Node addon's bindings-node/test/hostile-http.test.mjs (fake servers on 127.0.0.1 that
// announce a 1 GiB body, stream chunks without end, send a chunk size of ffffffffffff, or
// drip header bytes), run over this package's entries: the follower is the same file,
// bindings-js/http.mjs.
import * as api from 'shardroute-wasm';
import * as http from 'shardroute-wasm/http';
import { hostileHttpSuite } from '../../bindings-node/test/hostile-http.test.mjs';

hostileHttpSuite(api, http);
