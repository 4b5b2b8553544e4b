// The same suite over the raw HTTP/2 front (--grpc-raw-h2): ModelInfer served in place, every other RPC relayed to grpc-js.
import { grpcServerSuite } from './grpc-server-suite.js';

grpcServerSuite(true);
