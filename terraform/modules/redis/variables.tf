variable "name" {
  description = "Name prefix (the replication group id is \"<name>-redis\")."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,33}$", var.name))
    error_message = "name must be 2-34 lowercase letters, digits or dashes, starting with a letter."
  }
}

variable "subnet_ids" {
  description = "Private subnets for the cache nodes (at least two zones for failover)."
  type        = list(string)

  validation {
    condition     = length(var.subnet_ids) >= 2
    error_message = "Give at least two subnets (two zones) so a replica can take over."
  }
}

variable "security_group_ids" {
  description = "Security groups of the cache (the network module's redis group: 6379 from gateways and nodes only)."
  type        = list(string)
}

variable "auth_token" {
  description = "Redis AUTH token (16-128 letters and digits, e.g. `openssl rand -hex 32`). Stored in Terraform state and in the Secrets Manager secret this module writes; keep the state encrypted."
  type        = string
  sensitive   = true

  validation {
    condition     = can(regex("^[A-Za-z0-9]{16,128}$", var.auth_token))
    error_message = "auth_token must be 16-128 letters and digits (ElastiCache's limit, and safe inside a URL)."
  }
}

variable "node_type" {
  description = "Cache node type. Tessera keeps load reports, tenants, rate-limit counters and the response cache here."
  type        = string
  default     = "cache.t4g.medium"
}

variable "replicas" {
  description = "Read replicas next to the primary (1+ gives automatic failover across zones)."
  type        = number
  default     = 1

  validation {
    condition     = var.replicas >= 0 && var.replicas <= 5
    error_message = "replicas must be 0-5."
  }
}

variable "engine_version" {
  description = "Redis engine version."
  type        = string
  default     = "7.1"
}

variable "kms_key_arn" {
  description = "KMS key for encryption at rest and for the secret (null: AWS-managed keys)."
  type        = string
  default     = null
}

variable "snapshot_retention_days" {
  description = "Daily snapshots to keep (0 turns snapshots off; the cache holds tenants and keys, so keep some)."
  type        = number
  default     = 7
}

variable "tags" {
  description = "Tags added to every resource."
  type        = map(string)
  default     = {}
}
