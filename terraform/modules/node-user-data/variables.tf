variable "fleet_name" {
  description = "Name of the node fleet; becomes the CloudWatch dimension Fleet of the scaling metric."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,40}$", var.fleet_name))
    error_message = "fleet_name must be lowercase letters, digits and dashes, starting with a letter."
  }
}

variable "model_repository_url" {
  description = "Where the Triton model repository lives: s3://bucket/prefix (synced to local disk at start, or passed through with model_repository_mode = \"direct\"), or an absolute path already on the image."
  type        = string

  validation {
    condition     = can(regex("^(s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/[^\\s'\"]*)?|/[^\\s'\"]*)$", var.model_repository_url))
    error_message = "model_repository_url must be s3://bucket[/prefix] or an absolute path, without spaces or quotes."
  }
}

variable "model_repository_mode" {
  description = "\"sync\": `aws s3 sync` the repository to local_model_dir before every start (today's node reads local directories); \"direct\": pass model_repository_url to --model-repository unchanged (once the node reads S3 itself)."
  type        = string
  default     = "sync"

  validation {
    condition     = contains(["sync", "direct"], var.model_repository_mode)
    error_message = "model_repository_mode must be \"sync\" or \"direct\"."
  }
}

variable "local_model_dir" {
  description = "Local copy of the model repository in sync mode."
  type        = string
  default     = "/var/lib/tessera/models"
}

variable "model_control_mode" {
  description = "tessera-node --model-control-mode: none (load everything at start) or poll."
  type        = string
  default     = "none"

  validation {
    condition     = contains(["none", "poll"], var.model_control_mode)
    error_message = "model_control_mode must be none or poll (explicit needs an operator; use the node's repository API)."
  }
}

variable "redis_url_secret_arn" {
  description = "Secrets Manager secret whose string is the full REDIS_URL (rediss://:TOKEN@host:6379). Read at start, kept in /run (tmpfs) only, never in user data."
  type        = string

  validation {
    condition     = can(regex("^arn:[a-z-]+:secretsmanager:", var.redis_url_secret_arn))
    error_message = "redis_url_secret_arn must be a Secrets Manager ARN."
  }
}

variable "node_admin_key_secret_arn" {
  description = "Secrets Manager secret holding the node admin key: the model-repository and logging APIs (Triton's restricted APIs) need it on both endpoints. Read at start into /run (tmpfs), never in user data."
  type        = string

  validation {
    condition     = can(regex("^arn:[a-z-]+:secretsmanager:", var.node_admin_key_secret_arn))
    error_message = "node_admin_key_secret_arn must be a Secrets Manager ARN."
  }
}

variable "install_dir" {
  description = "Where Tessera is installed on the image (a checkout or unpacked `npm pack` with dependencies installed)."
  type        = string
  default     = "/opt/tessera"
}

variable "node_binary" {
  description = "Path of the Node.js binary (20.12+) on the image."
  type        = string
  default     = "/usr/bin/node"
}

variable "ports" {
  description = "Node ports."
  type = object({
    http    = optional(number, 8000)
    grpc    = optional(number, 8001)
    metrics = optional(number, 8002)
  })
  default = {}
}

variable "exit_timeout_secs" {
  description = "tessera-node --exit-timeout-secs: how long in-flight work may take after SIGTERM."
  type        = number
  default     = 30
}

variable "readiness_timeout_secs" {
  description = "How long a starting node may take to answer /v2/health/ready before its launch is abandoned."
  type        = number
  default     = 900
}

variable "launch_hook_name" {
  description = "Name of the EC2_INSTANCE_LAUNCHING lifecycle hook that the node completes once ready (or warmed)."
  type        = string
}

variable "termination_hook_name" {
  description = "Name of the EC2_INSTANCE_TERMINATING lifecycle hook that the node completes once drained."
  type        = string
}

variable "metrics_namespace" {
  description = "CloudWatch namespace of the metrics the CloudWatch agent publishes from the node's Prometheus endpoint."
  type        = string
  default     = "Tessera"
}

variable "extra_node_args" {
  description = "More tessera-node flags, e.g. [\"--rate-limit\", \"execution_count\"]."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for a in var.extra_node_args : can(regex("^[A-Za-z0-9_=.,:/*-]+$", a))])
    error_message = "extra_node_args may only hold simple tokens (letters, digits, _ = . , : / * -)."
  }
}
