// shardroute/http, the HTTP follower (bindings-js/http.mjs as CommonJS), against a real HTTP
// server on 127.0.0.1: the suite shared with shardroute-wasm (conformance/js/http-suite.mjs).
import { fileURLToPath } from 'node:url';

import * as api from 'shardroute';
import * as http from 'shardroute/http';
import { httpSuite } from '../../conformance/js/http-suite.mjs';

httpSuite(api, http, fileURLToPath(new URL('..', import.meta.url)));
