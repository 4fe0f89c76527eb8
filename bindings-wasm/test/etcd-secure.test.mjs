// shardroute-wasm/etcd against etcd with TLS, client certificates and authentication, in
// Node (its `node:https` transport for the CA and the client certificate): the suite of the
// Node addon (bindings-node/test/etcd-secure.test.mjs), over this package's copy of the
// shared shell and its core session.
import * as api from 'shardroute-wasm';
import * as etcd from 'shardroute-wasm/etcd';
import { secureEtcdSuite } from '../../bindings-node/test/etcd-secure.test.mjs';

secureEtcdSuite(api, etcd);
