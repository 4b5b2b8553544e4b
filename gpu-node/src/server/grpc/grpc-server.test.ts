// The node's gRPC server on grpc-js's own port (grpc-server-suite.ts).
import { grpcServerSuite } from './grpc-server-suite.js';

grpcServerSuite(false);
