output "primary_endpoint" {
  description = "Primary endpoint host (TLS only)."
  value       = aws_elasticache_replication_group.this.primary_endpoint_address
}

output "port" {
  description = "Redis port."
  value       = aws_elasticache_replication_group.this.port
}

output "redis_url_secret_arn" {
  description = "ARN of the Secrets Manager secret holding REDIS_URL (rediss://:TOKEN@host:port)."
  value       = aws_secretsmanager_secret.redis_url.arn
}

output "replication_group_id" {
  description = "ElastiCache replication group id."
  value       = aws_elasticache_replication_group.this.id
}
