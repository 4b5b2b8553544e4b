mock_provider "aws" {
  mock_resource "aws_elasticache_replication_group" {
    defaults = {
      primary_endpoint_address = "master.tessera-test-redis.abc123.use1.cache.amazonaws.com"
      port                     = 6379
    }
  }
  mock_resource "aws_secretsmanager_secret" {
    defaults = { arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:tessera-test/redis-url-AbCdEf" }
  }
}

variables {
  name               = "tessera-test"
  subnet_ids         = ["subnet-a", "subnet-b"]
  security_group_ids = ["sg-redis"]
  auth_token         = "0123456789abcdef0123456789abcdef"
}

run "tls_auth_and_encryption" {
  command = apply

  assert {
    condition     = aws_elasticache_replication_group.this.transit_encryption_enabled && aws_elasticache_replication_group.this.transit_encryption_mode == "required"
    error_message = "Redis must require TLS in transit."
  }

  assert {
    condition     = aws_elasticache_replication_group.this.at_rest_encryption_enabled
    error_message = "Redis must be encrypted at rest."
  }

  assert {
    condition     = nonsensitive(aws_elasticache_replication_group.this.auth_token == var.auth_token)
    error_message = "Redis must require the AUTH token."
  }

  assert {
    condition     = aws_elasticache_replication_group.this.automatic_failover_enabled && aws_elasticache_replication_group.this.multi_az_enabled && aws_elasticache_replication_group.this.num_cache_clusters == 2
    error_message = "One replica by default, with Multi-AZ failover."
  }

  assert {
    condition     = nonsensitive(aws_secretsmanager_secret_version.redis_url.secret_string) == "rediss://:0123456789abcdef0123456789abcdef@master.tessera-test-redis.abc123.use1.cache.amazonaws.com:6379"
    error_message = "The secret must hold a rediss:// URL with the token, host and port."
  }

  assert {
    condition     = output.redis_url_secret_arn == "arn:aws:secretsmanager:us-east-1:123456789012:secret:tessera-test/redis-url-AbCdEf"
    error_message = "The module must output the secret's ARN."
  }
}

run "no_replica_no_failover" {
  command = plan

  variables {
    replicas = 0
  }

  assert {
    condition     = !aws_elasticache_replication_group.this.automatic_failover_enabled && aws_elasticache_replication_group.this.num_cache_clusters == 1
    error_message = "Without replicas, failover must be off (ElastiCache refuses it)."
  }
}

run "rejects_weak_token" {
  command = plan

  variables {
    auth_token = "short"
  }

  expect_failures = [var.auth_token]
}
