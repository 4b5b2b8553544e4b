output "user_data" {
  description = "The rendered cloud-init user data (a bash script), plain text; base64-encode it for a launch template."
  value       = local.user_data
}

output "node_unit" {
  description = "The rendered systemd unit tessera-node.service."
  value       = local.node_unit
}

output "node_args" {
  description = "The tessera-node arguments (after the binary); $${...} are systemd environment references."
  value       = local.node_args
}

output "model_repository_arg" {
  description = "What --model-repository receives."
  value       = local.repository_arg
}

output "syncs_from_s3" {
  description = "Whether the node syncs the repository from S3 before each start."
  value       = local.sync
}

output "cloudwatch_agent_config" {
  description = "The CloudWatch agent configuration (JSON) that publishes the queue-time metrics."
  value       = local.cwagent_config
}
