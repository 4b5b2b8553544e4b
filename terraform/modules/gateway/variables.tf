variable "name" {
  description = "Name prefix of every resource."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,20}$", var.name))
    error_message = "name must be 2-21 lowercase letters, digits or dashes, starting with a letter (load balancer names are short)."
  }
}

variable "vpc_id" {
  description = "VPC of the deployment."
  type        = string
}

variable "public_subnet_ids" {
  description = "Subnets of the load balancer (public, two zones or more)."
  type        = list(string)
}

variable "private_subnet_ids" {
  description = "Subnets of the gateway instances (private)."
  type        = list(string)
}

variable "alb_security_group_ids" {
  description = "Security groups of the load balancer (network module: alb)."
  type        = list(string)
}

variable "gateway_security_group_ids" {
  description = "Security groups of the gateway instances (network module: gateway)."
  type        = list(string)
}

variable "certificate_arn" {
  description = "ACM certificate for the HTTPS listener (must cover the DNS name clients use)."
  type        = string

  validation {
    condition     = can(regex("^arn:[a-z-]+:acm:", var.certificate_arn))
    error_message = "certificate_arn must be an ACM certificate ARN."
  }
}

variable "ssl_policy" {
  description = "TLS policy of the HTTPS listener."
  type        = string
  default     = "ELBSecurityPolicy-TLS13-1-2-2021-06"
}

variable "ami_id" {
  description = "AMI of the gateway instances (x86_64 or arm64 to match instance_type) with Node.js 20, the AWS CLI and Tessera in install_dir."
  type        = string

  validation {
    condition     = can(regex("^ami-[0-9a-f]{8,17}$", var.ami_id))
    error_message = "ami_id must look like ami-0123456789abcdef0."
  }
}

variable "instance_type" {
  description = "Gateway instance type (CPU; the gateway does no inference)."
  type        = string
  default     = "c7i.large"
}

variable "capacity" {
  description = "Gateway group size; CPU target tracking moves desired between min and max."
  type = object({
    min_size         = optional(number, 2)
    max_size         = optional(number, 6)
    desired_capacity = optional(number, 2)
  })
  default = {}

  validation {
    condition     = var.capacity.min_size >= 1 && var.capacity.min_size <= var.capacity.desired_capacity && var.capacity.desired_capacity <= var.capacity.max_size
    error_message = "capacity needs 1 <= min_size <= desired_capacity <= max_size."
  }
}

variable "redis_url_secret_arn" {
  description = "Secrets Manager secret holding REDIS_URL (the redis module's output)."
  type        = string
}

variable "admin_key_hash" {
  description = "sha256 (lowercase hex) of the admin API key: `printf %s \"$ADMIN_KEY\" | sha256sum`. The key itself never reaches Terraform."
  type        = string

  validation {
    condition     = can(regex("^[0-9a-f]{64}$", var.admin_key_hash))
    error_message = "admin_key_hash must be 64 lowercase hex digits (a sha256)."
  }
}

variable "gateway_config" {
  description = "More gateway configuration (tiers, routing, cache, ...; see gateway/src/config/gateway-config.ts), merged over the generated file. Do not put secrets here: it is written into user data."
  type        = any
  default     = {}
}

variable "port" {
  description = "Port the gateway listens on (the target group's port)."
  type        = number
  default     = 8080
}

variable "install_dir" {
  description = "Where Tessera is installed on the image."
  type        = string
  default     = "/opt/tessera"
}

variable "node_binary" {
  description = "Node.js binary on the image."
  type        = string
  default     = "/usr/bin/node"
}

variable "internal" {
  description = "An internal load balancer (clients inside the VPC or behind a VPN) instead of an internet-facing one."
  type        = bool
  default     = false
}

variable "deletion_protection" {
  description = "Protect the load balancer from deletion (turn off before `terraform destroy`)."
  type        = bool
  default     = false
}

variable "kms_key_arn" {
  description = "KMS key for the root volumes (null: the account's default EBS key)."
  type        = string
  default     = null
}

variable "enable_ssm" {
  description = "Attach AmazonSSMManagedInstanceCore for Session Manager shells."
  type        = bool
  default     = true
}

variable "tags" {
  description = "Tags added to every resource."
  type        = map(string)
  default     = {}
}
