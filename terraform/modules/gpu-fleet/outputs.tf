output "autoscaling_group_names" {
  description = "The two groups: od (on-demand, warm pool) and spot (mixed instances)."
  value       = { od = aws_autoscaling_group.od.name, spot = aws_autoscaling_group.spot.name }
}

output "launch_template_id" {
  description = "ID of the node launch template."
  value       = aws_launch_template.node.id
}

output "instance_role_name" {
  description = "IAM role of the nodes (attach more policies here, e.g. kms:Decrypt for an SSE-KMS model bucket)."
  value       = aws_iam_role.node.name
}

output "lifecycle_hook_names" {
  description = "Launch and termination hook names (the same in both groups)."
  value       = { launch = local.launch_hook_name, termination = local.termination_hook_name }
}

output "queue_time_metric" {
  description = "Where the scaling metric lives: namespace, dimension and the two metric names."
  value = {
    namespace = var.metrics_namespace
    dimension = { Fleet = var.name }
    metrics   = ["nv_inference_queue_duration_us", "nv_inference_request_success"]
  }
}

output "node_admin_key_secret_arn" {
  description = "Secrets Manager secret holding the node admin key (header tessera-node-admin-key over HTTP, gRPC metadata triton-grpc-protocol-admin-key) for the nodes' model-repository and logging APIs."
  value       = aws_secretsmanager_secret.node_admin_key.arn
}

output "user_data" {
  description = "The rendered user data (plain text), for review."
  value       = module.user_data.user_data
}
