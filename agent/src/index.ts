export { startAgent, type AgentOptions, type AgentTuning, type RunningAgent } from './agent';
export { parseAgentConfig, helpText, ConfigError, type AgentConfig, type HostPort } from './config';
export { agentVersion } from './version';
export {
  runCheck,
  parseCheckOptions,
  judgeCiSummary,
  markdownReport,
  CHECK_EXIT,
  type CheckOptions,
  type FailOn,
} from './check';
export { consumerId, subjectLine, type ConsumerConfig, type ConsumerSource } from './observe/consumers';
export { runConsumerId } from './consumer-id';
