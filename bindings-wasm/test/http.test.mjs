// shardroute-wasm/http, the HTTP follower (bindings-js/http.mjs), in Node against a real HTTP
// server on 127.0.0.1: the suite shared with the Node addon (conformance/js/http-suite.mjs).
import { fileURLToPath } from 'node:url';

import * as api from 'shardroute-wasm';
import * as http from 'shardroute-wasm/http';
import { httpSuite } from '../../conformance/js/http-suite.mjs';

httpSuite(api, http, fileURLToPath(new URL('..', import.meta.url)));
