# ElastiCache for Redis with TLS in transit (clients use rediss://), AUTH, encryption at rest, Multi-AZ
# failover when there is a replica, and the full REDIS_URL in a Secrets Manager secret: nodes and gateways
# read it at start, so the token never appears in user data.

locals {
  tags     = merge({ "tessera:deployment" = var.name }, var.tags)
  failover = var.replicas > 0
}

resource "aws_elasticache_subnet_group" "this" {
  name       = "${var.name}-redis"
  subnet_ids = var.subnet_ids
  tags       = local.tags
}

resource "aws_elasticache_parameter_group" "this" {
  name   = "${var.name}-redis7"
  family = "redis7"
  tags   = local.tags

  # Tessera's keys have TTLs (load reports, cache entries); evict those first under memory pressure,
  # never tenants and API keys (which have none).
  parameter {
    name  = "maxmemory-policy"
    value = "volatile-lru"
  }
}

resource "aws_elasticache_replication_group" "this" {
  replication_group_id = "${var.name}-redis"
  description          = "Tessera ${var.name}: fleet state, tenants, rate limits, response cache"

  engine               = "redis"
  engine_version       = var.engine_version
  node_type            = var.node_type
  port                 = 6379
  parameter_group_name = aws_elasticache_parameter_group.this.name
  subnet_group_name    = aws_elasticache_subnet_group.this.name
  security_group_ids   = var.security_group_ids

  num_cache_clusters         = 1 + var.replicas
  automatic_failover_enabled = local.failover
  multi_az_enabled           = local.failover

  transit_encryption_enabled = true
  transit_encryption_mode    = "required"
  auth_token                 = var.auth_token
  auth_token_update_strategy = "ROTATE"
  at_rest_encryption_enabled = true
  kms_key_id                 = var.kms_key_arn

  snapshot_retention_limit   = var.snapshot_retention_days
  auto_minor_version_upgrade = true
  apply_immediately          = false

  tags = local.tags
}

resource "aws_secretsmanager_secret" "redis_url" {
  name_prefix = "${var.name}/redis-url-"
  description = "REDIS_URL (rediss://, with the AUTH token) for Tessera ${var.name} nodes and gateways"
  kms_key_id  = var.kms_key_arn
  tags        = local.tags
}

resource "aws_secretsmanager_secret_version" "redis_url" {
  secret_id     = aws_secretsmanager_secret.redis_url.id
  secret_string = "rediss://:${var.auth_token}@${aws_elasticache_replication_group.this.primary_endpoint_address}:${aws_elasticache_replication_group.this.port}"
}
