// The same suite over the raw HTTP/2 front (--grpc-raw-h2): every unary RPC and ModelStreamInfer served in place.
import { grpcServerSuite } from './grpc-server-suite.js';

grpcServerSuite(true);
