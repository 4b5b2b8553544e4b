export { perCoreSupport, pinnedCommand, pinProcess, type PerCoreSupport } from './pinning.js';
export {
  currentThreadId,
  parseThreadStat,
  perUnit,
  readThreadCpu,
  threadCpuDelta,
  type CpuSplit,
  type ThreadCpu,
  type ThreadRoles,
} from './thread-cpu.js';
