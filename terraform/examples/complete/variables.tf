variable "region" {
  description = "AWS region."
  type        = string
  default     = "us-east-1"
}

variable "name" {
  description = "Deployment name: prefix of every resource (lowercase, short: it ends up in load balancer names)."
  type        = string
  default     = "tessera"
}

variable "availability_zones" {
  description = "Two or three zones of the region that offer your GPU instance types."
  type        = list(string)
  default     = ["us-east-1a", "us-east-1b", "us-east-1c"]
}

variable "vpc_cidr" {
  description = "CIDR block of the new VPC."
  type        = string
  default     = "10.40.0.0/16"
}

variable "public_ingress_cidr_blocks" {
  description = "Who may reach the gateway's HTTPS load balancer."
  type        = list(string)
  default     = ["0.0.0.0/0"]
}

variable "certificate_arn" {
  description = "ACM certificate for the gateway's HTTPS listener."
  type        = string
}

variable "gateway_ami_id" {
  description = "AMI of the gateway instances: Node.js 20, the AWS CLI, Tessera in /opt/tessera."
  type        = string
}

variable "gateway_instance_type" {
  description = "Gateway instance type."
  type        = string
  default     = "c7i.large"
}

variable "admin_key_hash" {
  description = "sha256 hex of the gateway admin key (printf %s \"$ADMIN_KEY\" | sha256sum)."
  type        = string
}

variable "gpu_ami_id" {
  description = "GPU AMI of the nodes: NVIDIA driver, Node.js 20, the AWS CLI, the CloudWatch agent, Tessera in /opt/tessera with onnxruntime-node's CUDA build."
  type        = string
}

variable "gpu_instance_types" {
  description = "GPU instance types, preferred first (NVIDIA families only: g4dn, g5, g6, g6e, gr6, p3, p3dn, p4d, p4de, p5, p5e, p5en)."
  type        = list(string)
  default     = ["g5.xlarge", "g6.xlarge", "g4dn.xlarge"]
}

variable "model_repository_url" {
  description = "The Triton model repository, e.g. s3://my-models/prod (nodes may read exactly this prefix)."
  type        = string
}

variable "on_demand" {
  description = "On-demand node group (with the warm pool): min_size, max_size, desired_capacity."
  type = object({
    min_size         = optional(number, 1)
    max_size         = optional(number, 4)
    desired_capacity = optional(number, 1)
  })
  default = {}
}

variable "spot" {
  description = "Spot burst node group: min_size, max_size, desired_capacity, on_demand_base_capacity, on_demand_percentage."
  type = object({
    min_size                = optional(number, 0)
    max_size                = optional(number, 8)
    desired_capacity        = optional(number, 0)
    on_demand_base_capacity = optional(number, 0)
    on_demand_percentage    = optional(number, 0)
  })
  default = {}
}

variable "warm_pool_size" {
  description = "Stopped, pre-provisioned on-demand nodes kept in the warm pool (0 turns it off)."
  type        = number
  default     = 1
}

variable "queue_time_target_ms" {
  description = "Scaling target: the fleet's average queue time per request, ms."
  type        = number
  default     = 50
}

variable "redis_auth_token" {
  description = "Redis AUTH token (16-128 letters/digits; `openssl rand -hex 32`). Pass it as TF_VAR_redis_auth_token, not in a file."
  type        = string
  sensitive   = true
}

variable "redis_node_type" {
  description = "ElastiCache node type."
  type        = string
  default     = "cache.t4g.medium"
}

variable "gateway_config" {
  description = "More gateway configuration (tiers, routing, cache), merged into /etc/tessera/gateway.json. No secrets."
  type        = any
  default     = {}
}

variable "tags" {
  description = "Tags added to every resource."
  type        = map(string)
  default     = {}
}
