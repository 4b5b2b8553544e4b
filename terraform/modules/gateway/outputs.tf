output "url" {
  description = "HTTPS URL of the load balancer's own DNS name (point your DNS name, the certificate's, at it)."
  value       = "https://${aws_lb.this.dns_name}"
}

output "lb_dns_name" {
  description = "DNS name of the load balancer (a CNAME or alias target)."
  value       = aws_lb.this.dns_name
}

output "lb_zone_id" {
  description = "Route 53 zone id of the load balancer (for an alias record)."
  value       = aws_lb.this.zone_id
}

output "autoscaling_group_name" {
  description = "The gateway group."
  value       = aws_autoscaling_group.gateway.name
}

output "config" {
  description = "The gateway configuration file written to /etc/tessera/gateway.json."
  value       = local.config
}

output "user_data" {
  description = "The rendered gateway user data (plain text)."
  value       = local.user_data
}
