output "gateway_url" {
  description = "HTTPS address of the gateway load balancer. Point your DNS name (the certificate's) at gateway_lb_dns_name and use that."
  value       = module.gateway.url
}

output "gateway_lb_dns_name" {
  description = "DNS name of the gateway load balancer (CNAME / alias target)."
  value       = module.gateway.lb_dns_name
}

output "gateway_lb_zone_id" {
  description = "Route 53 zone id of the load balancer, for an alias record."
  value       = module.gateway.lb_zone_id
}

output "gateway_autoscaling_group" {
  description = "The gateway Auto Scaling group."
  value       = module.gateway.autoscaling_group_name
}

output "node_autoscaling_groups" {
  description = "The GPU node groups: od (on-demand + warm pool) and spot."
  value       = module.gpu_fleet.autoscaling_group_names
}

output "node_lifecycle_hooks" {
  description = "Launch (ready) and termination (drain) hook names of both node groups."
  value       = module.gpu_fleet.lifecycle_hook_names
}

output "queue_time_metric" {
  description = "CloudWatch namespace, dimension and metrics the node groups scale on."
  value       = module.gpu_fleet.queue_time_metric
}

output "redis_endpoint" {
  description = "Redis primary endpoint (TLS only, AUTH required)."
  value       = module.redis.primary_endpoint
}

output "redis_url_secret_arn" {
  description = "Secrets Manager secret with REDIS_URL, read by nodes and gateways at start."
  value       = module.redis.redis_url_secret_arn
}

output "vpc_id" {
  description = "The VPC."
  value       = module.network.vpc_id
}

output "security_group_ids" {
  description = "Security groups by role; attach `prometheus` to the Prometheus server that scrapes nodes (8002) and gateways."
  value       = module.network.security_group_ids
}

output "node_ingress_rules" {
  description = "The node security group's ingress rules (who may reach 8000/8001/8002), for audits."
  value       = module.network.node_ingress_rules
}
