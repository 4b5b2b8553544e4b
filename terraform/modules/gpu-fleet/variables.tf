variable "name" {
  description = "Fleet name: prefix of every resource, and the Fleet dimension of the queue-time metric."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,30}$", var.name))
    error_message = "name must be 2-31 lowercase letters, digits or dashes, starting with a letter."
  }
}

variable "ami_id" {
  description = "GPU AMI (x86_64) with the NVIDIA driver, Node.js 20, the AWS CLI, the CloudWatch agent and Tessera installed in install_dir (see terraform/README.md, \"The node image\")."
  type        = string

  validation {
    condition     = can(regex("^ami-[0-9a-f]{8,17}$", var.ami_id))
    error_message = "ami_id must look like ami-0123456789abcdef0."
  }
}

variable "instance_types" {
  description = "GPU instance types, most preferred first. The on-demand group launches the first; the spot group may use all of them. Only NVIDIA GPU families with x86_64 CUDA support are accepted: g4dn, g5, g6, g6e, gr6, p3, p3dn, p4d, p4de, p5, p5e, p5en."
  type        = list(string)

  validation {
    condition     = length(var.instance_types) > 0 && length(var.instance_types) == length(distinct(var.instance_types))
    error_message = "Give at least one instance type, without repeats."
  }

  validation {
    condition = alltrue([
      for t in var.instance_types :
      can(regex("^[a-z0-9]+\\.[a-z0-9]+$", t)) && contains(["g4dn", "g5", "g6", "g6e", "gr6", "p3", "p3dn", "p4d", "p4de", "p5", "p5e", "p5en"], split(".", t)[0])
    ])
    error_message = "instance_types may only hold NVIDIA GPU instance types of the families g4dn, g5, g6, g6e, gr6, p3, p3dn, p4d, p4de, p5, p5e, p5en (e.g. g5.xlarge)."
  }
}

variable "subnet_ids" {
  description = "Private subnets the nodes launch in (several zones give spot more pools)."
  type        = list(string)
}

variable "security_group_ids" {
  description = "Security groups of the nodes (the network module's node group: 8000/8001 from gateways, 8002 from Prometheus)."
  type        = list(string)
}

variable "model_repository_url" {
  description = "The Triton model repository: s3://bucket/prefix (the instance profile may read exactly that prefix) or an absolute path on the image."
  type        = string
}

variable "model_repository_mode" {
  description = "\"sync\" (copy from S3 to local disk before each start; what today's node needs) or \"direct\" (pass the s3:// URL to the node)."
  type        = string
  default     = "sync"
}

variable "model_control_mode" {
  description = "tessera-node --model-control-mode (none or poll)."
  type        = string
  default     = "none"
}

variable "redis_url_secret_arn" {
  description = "Secrets Manager secret holding REDIS_URL (the redis module's output)."
  type        = string
}

variable "on_demand" {
  description = "The on-demand group (with the warm pool): the baseline that is always there."
  type = object({
    min_size         = optional(number, 1)
    max_size         = optional(number, 4)
    desired_capacity = optional(number, 1)
  })
  default = {}

  validation {
    condition     = var.on_demand.min_size >= 0 && var.on_demand.min_size <= var.on_demand.desired_capacity && var.on_demand.desired_capacity <= var.on_demand.max_size
    error_message = "on_demand needs 0 <= min_size <= desired_capacity <= max_size."
  }
}

variable "spot" {
  description = "The burst group: mixed instances over all instance_types, on_demand_percentage of it on demand above on_demand_base_capacity, the rest spot."
  type = object({
    min_size                 = optional(number, 0)
    max_size                 = optional(number, 8)
    desired_capacity         = optional(number, 0)
    on_demand_base_capacity  = optional(number, 0)
    on_demand_percentage     = optional(number, 0)
    spot_allocation_strategy = optional(string, "price-capacity-optimized")
  })
  default = {}

  validation {
    condition     = var.spot.min_size >= 0 && var.spot.min_size <= var.spot.desired_capacity && var.spot.desired_capacity <= var.spot.max_size
    error_message = "spot needs 0 <= min_size <= desired_capacity <= max_size."
  }

  validation {
    condition     = var.spot.on_demand_percentage >= 0 && var.spot.on_demand_percentage <= 100 && var.spot.on_demand_base_capacity >= 0
    error_message = "spot.on_demand_percentage must be 0-100 and on_demand_base_capacity >= 0."
  }
}

variable "warm_pool" {
  description = "Warm pool of the on-demand group: stopped instances with the models already on disk, started in a fraction of a cold launch."
  type = object({
    enabled                     = optional(bool, true)
    min_size                    = optional(number, 1)
    max_group_prepared_capacity = optional(number, null)
    reuse_on_scale_in           = optional(bool, true)
  })
  default = {}
}

variable "queue_time_target_ms" {
  description = "Target of the scaling policies: average queue time per inference request across the fleet, in milliseconds (from nv_inference_queue_duration_us / nv_inference_request_success)."
  type        = number
  default     = 50

  validation {
    condition     = var.queue_time_target_ms > 0
    error_message = "queue_time_target_ms must be positive."
  }
}

variable "metrics_namespace" {
  description = "CloudWatch namespace the nodes' CloudWatch agent publishes to."
  type        = string
  default     = "Tessera"
}

variable "instance_warmup_secs" {
  description = "Seconds a new node needs before its metrics count for scaling (model load time)."
  type        = number
  default     = 300
}

variable "exit_timeout_secs" {
  description = "tessera-node --exit-timeout-secs (drain bound); the termination hook waits for it plus a margin."
  type        = number
  default     = 30
}

variable "readiness_timeout_secs" {
  description = "How long a launching node may take to become ready before the launch is abandoned."
  type        = number
  default     = 900
}

variable "root_volume" {
  description = "Root volume (encrypted gp3; holds the OS, Tessera and the local model repository)."
  type = object({
    device_name = optional(string, "/dev/sda1")
    size_gb     = optional(number, 200)
    iops        = optional(number, 3000)
    throughput  = optional(number, 250)
  })
  default = {}
}

variable "kms_key_arn" {
  description = "KMS key for the root volumes (null: the account's default EBS key)."
  type        = string
  default     = null
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

variable "extra_node_args" {
  description = "More tessera-node flags."
  type        = list(string)
  default     = []
}

variable "enable_ssm" {
  description = "Attach AmazonSSMManagedInstanceCore so operators can open Session Manager shells (no SSH, no key pairs)."
  type        = bool
  default     = true
}

variable "tags" {
  description = "Tags added to every resource (and propagated to instances)."
  type        = map(string)
  default     = {}

  # Instance tags are exposed in instance metadata (the lifecycle handler reads its group's name there),
  # and EC2 then refuses tag keys with characters outside this set.
  validation {
    condition     = alltrue([for k in keys(var.tags) : can(regex("^[A-Za-z0-9+=._:@-]+$", k))])
    error_message = "Tag keys may only use letters, digits and + = . _ : @ - (instance metadata tags are on)."
  }
}
