variable "name" {
  description = "Name prefix for every resource (e.g. \"tessera-prod\")."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,30}$", var.name))
    error_message = "name must be 2-31 lowercase letters, digits or dashes, starting with a letter."
  }
}

variable "vpc_cidr" {
  description = "CIDR block of the VPC. Subnets are carved out of it: /20 private and /24 public per zone."
  type        = string
  default     = "10.40.0.0/16"

  validation {
    condition     = can(cidrnetmask(var.vpc_cidr)) && tonumber(split("/", var.vpc_cidr)[1]) <= 16
    error_message = "vpc_cidr must be an IPv4 CIDR of /16 or larger."
  }
}

variable "availability_zones" {
  description = "Availability zones to spread subnets over (two or three; GPU capacity differs per zone, so list the zones that have your instance types)."
  type        = list(string)

  validation {
    condition     = length(var.availability_zones) >= 2 && length(var.availability_zones) <= 3
    error_message = "Give two or three availability zones."
  }
}

variable "single_nat_gateway" {
  description = "One NAT gateway for all zones (cheaper) instead of one per zone (survives a zone outage)."
  type        = bool
  default     = true
}

variable "public_ingress_cidr_blocks" {
  description = "Who may reach the gateway's load balancer on 443 (and 80, which only redirects). The load balancer is the only thing open to these; node ports never are."
  type        = list(string)
  default     = ["0.0.0.0/0"]
}

variable "ports" {
  description = "Ports of the node agent (tessera-node's --http-port, --grpc-port, --metrics-port) and the gateway."
  type = object({
    node_http    = optional(number, 8000)
    node_grpc    = optional(number, 8001)
    node_metrics = optional(number, 8002)
    gateway      = optional(number, 8080)
    redis        = optional(number, 6379)
  })
  default = {}
}

variable "tags" {
  description = "Tags added to every resource."
  type        = map(string)
  default     = {}
}
