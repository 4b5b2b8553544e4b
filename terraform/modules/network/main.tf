# Networking for a Tessera deployment: a VPC with public subnets (load balancer, NAT) and private subnets
# (gateways, GPU nodes, Redis), an S3 gateway endpoint so model downloads stay off the NAT, and the security
# groups that define who talks to whom:
#
#   internet --443/80--> alb --gateway port--> gateway --8000/8001--> node
#                                           prometheus --8002 + gateway port--> node / gateway
#   gateway, node --6379--> redis
#
# Node ports are opened only to the gateway and Prometheus security groups, never to a CIDR block.

locals {
  zones       = var.availability_zones
  nat_count   = var.single_nat_gateway ? 1 : length(local.zones)
  tags        = merge({ "tessera:deployment" = var.name }, var.tags)
  vpc_netbits = 20 - tonumber(split("/", var.vpc_cidr)[1])

  # Every ingress rule of the node security group: port => the security group allowed to reach it.
  node_ingress = {
    http-from-gateway       = { port = var.ports.node_http, source = aws_security_group.gateway.id, description = "KServe v2 HTTP from the gateway" }
    grpc-from-gateway       = { port = var.ports.node_grpc, source = aws_security_group.gateway.id, description = "GRPCInferenceService from the gateway" }
    metrics-from-prometheus = { port = var.ports.node_metrics, source = aws_security_group.prometheus.id, description = "Prometheus scrape of /metrics" }
  }
}

resource "aws_vpc" "this" {
  cidr_block           = var.vpc_cidr
  enable_dns_support   = true
  enable_dns_hostnames = true
  tags                 = merge(local.tags, { Name = var.name })
}

resource "aws_internet_gateway" "this" {
  vpc_id = aws_vpc.this.id
  tags   = merge(local.tags, { Name = var.name })
}

resource "aws_subnet" "private" {
  count             = length(local.zones)
  vpc_id            = aws_vpc.this.id
  availability_zone = local.zones[count.index]
  cidr_block        = cidrsubnet(var.vpc_cidr, local.vpc_netbits, count.index)
  tags              = merge(local.tags, { Name = "${var.name}-private-${local.zones[count.index]}", "tessera:tier" = "private" })
}

resource "aws_subnet" "public" {
  count             = length(local.zones)
  vpc_id            = aws_vpc.this.id
  availability_zone = local.zones[count.index]
  # /24s at the top of the range, clear of the /20 private subnets.
  cidr_block              = cidrsubnet(var.vpc_cidr, 24 - tonumber(split("/", var.vpc_cidr)[1]), pow(2, 24 - tonumber(split("/", var.vpc_cidr)[1])) - 1 - count.index)
  map_public_ip_on_launch = false
  tags                    = merge(local.tags, { Name = "${var.name}-public-${local.zones[count.index]}", "tessera:tier" = "public" })
}

resource "aws_eip" "nat" {
  count  = local.nat_count
  domain = "vpc"
  tags   = merge(local.tags, { Name = "${var.name}-nat-${count.index}" })
}

resource "aws_nat_gateway" "this" {
  count         = local.nat_count
  allocation_id = aws_eip.nat[count.index].id
  subnet_id     = aws_subnet.public[count.index].id
  tags          = merge(local.tags, { Name = "${var.name}-${count.index}" })

  depends_on = [aws_internet_gateway.this]
}

resource "aws_route_table" "public" {
  vpc_id = aws_vpc.this.id
  tags   = merge(local.tags, { Name = "${var.name}-public" })
}

resource "aws_route" "public_internet" {
  route_table_id         = aws_route_table.public.id
  destination_cidr_block = "0.0.0.0/0"
  gateway_id             = aws_internet_gateway.this.id
}

resource "aws_route_table_association" "public" {
  count          = length(local.zones)
  subnet_id      = aws_subnet.public[count.index].id
  route_table_id = aws_route_table.public.id
}

resource "aws_route_table" "private" {
  count  = length(local.zones)
  vpc_id = aws_vpc.this.id
  tags   = merge(local.tags, { Name = "${var.name}-private-${local.zones[count.index]}" })
}

resource "aws_route" "private_nat" {
  count                  = length(local.zones)
  route_table_id         = aws_route_table.private[count.index].id
  destination_cidr_block = "0.0.0.0/0"
  nat_gateway_id         = aws_nat_gateway.this[var.single_nat_gateway ? 0 : count.index].id
}

resource "aws_route_table_association" "private" {
  count          = length(local.zones)
  subnet_id      = aws_subnet.private[count.index].id
  route_table_id = aws_route_table.private[count.index].id
}

data "aws_region" "current" {}

# Model repositories are synced from S3 at boot: keep that traffic on the gateway endpoint (free, no NAT).
resource "aws_vpc_endpoint" "s3" {
  vpc_id            = aws_vpc.this.id
  service_name      = "com.amazonaws.${data.aws_region.current.name}.s3"
  vpc_endpoint_type = "Gateway"
  route_table_ids   = aws_route_table.private[*].id
  tags              = merge(local.tags, { Name = "${var.name}-s3" })
}

# ---------------------------------------------------------------------------------------------------------
# Security groups. Rules are separate resources (aws_vpc_security_group_*_rule) so each is one object that
# tests can inspect and that can be changed without replacing the group.

resource "aws_security_group" "alb" {
  name        = "${var.name}-alb"
  description = "Tessera gateway load balancer: HTTPS from clients"
  vpc_id      = aws_vpc.this.id
  tags        = merge(local.tags, { Name = "${var.name}-alb" })
}

resource "aws_security_group" "gateway" {
  name        = "${var.name}-gateway"
  description = "Tessera gateways: traffic from the load balancer only"
  vpc_id      = aws_vpc.this.id
  tags        = merge(local.tags, { Name = "${var.name}-gateway" })
}

resource "aws_security_group" "node" {
  name        = "${var.name}-node"
  description = "Tessera GPU nodes: 8000/8001 from gateways, 8002 from Prometheus"
  vpc_id      = aws_vpc.this.id
  tags        = merge(local.tags, { Name = "${var.name}-node" })
}

resource "aws_security_group" "prometheus" {
  name        = "${var.name}-prometheus"
  description = "Attach to the Prometheus server(s) that scrape Tessera nodes and gateways"
  vpc_id      = aws_vpc.this.id
  tags        = merge(local.tags, { Name = "${var.name}-prometheus" })
}

resource "aws_security_group" "redis" {
  name        = "${var.name}-redis"
  description = "Tessera Redis: TLS port from gateways and nodes"
  vpc_id      = aws_vpc.this.id
  tags        = merge(local.tags, { Name = "${var.name}-redis" })
}

# Load balancer: clients in, gateways out.
resource "aws_vpc_security_group_ingress_rule" "alb_https" {
  for_each          = toset(var.public_ingress_cidr_blocks)
  security_group_id = aws_security_group.alb.id
  description       = "HTTPS from clients"
  ip_protocol       = "tcp"
  from_port         = 443
  to_port           = 443
  cidr_ipv4         = each.value
}

resource "aws_vpc_security_group_ingress_rule" "alb_http" {
  for_each          = toset(var.public_ingress_cidr_blocks)
  security_group_id = aws_security_group.alb.id
  description       = "HTTP from clients (redirected to HTTPS)"
  ip_protocol       = "tcp"
  from_port         = 80
  to_port           = 80
  cidr_ipv4         = each.value
}

resource "aws_vpc_security_group_egress_rule" "alb_to_gateway" {
  security_group_id            = aws_security_group.alb.id
  description                  = "To gateways"
  ip_protocol                  = "tcp"
  from_port                    = var.ports.gateway
  to_port                      = var.ports.gateway
  referenced_security_group_id = aws_security_group.gateway.id
}

# Gateway: the load balancer and Prometheus in; anything out (nodes, Redis, AWS APIs through the NAT).
resource "aws_vpc_security_group_ingress_rule" "gateway_from_alb" {
  security_group_id            = aws_security_group.gateway.id
  description                  = "Client traffic from the load balancer"
  ip_protocol                  = "tcp"
  from_port                    = var.ports.gateway
  to_port                      = var.ports.gateway
  referenced_security_group_id = aws_security_group.alb.id
}

resource "aws_vpc_security_group_ingress_rule" "gateway_from_prometheus" {
  security_group_id            = aws_security_group.gateway.id
  description                  = "Prometheus scrape of the gateway's /metrics"
  ip_protocol                  = "tcp"
  from_port                    = var.ports.gateway
  to_port                      = var.ports.gateway
  referenced_security_group_id = aws_security_group.prometheus.id
}

resource "aws_vpc_security_group_egress_rule" "gateway_all" {
  security_group_id = aws_security_group.gateway.id
  description       = "Nodes, Redis and AWS APIs"
  ip_protocol       = "-1"
  cidr_ipv4         = "0.0.0.0/0"
}

# Node: only the gateway (inference) and Prometheus (metrics) in.
resource "aws_vpc_security_group_ingress_rule" "node" {
  for_each                     = local.node_ingress
  security_group_id            = aws_security_group.node.id
  description                  = each.value.description
  ip_protocol                  = "tcp"
  from_port                    = each.value.port
  to_port                      = each.value.port
  referenced_security_group_id = each.value.source
}

resource "aws_vpc_security_group_egress_rule" "node_all" {
  security_group_id = aws_security_group.node.id
  description       = "Redis, S3 (model repository), AWS APIs, package mirrors"
  ip_protocol       = "-1"
  cidr_ipv4         = "0.0.0.0/0"
}

# Prometheus: out to the metrics ports only.
resource "aws_vpc_security_group_egress_rule" "prometheus_to_node" {
  security_group_id            = aws_security_group.prometheus.id
  description                  = "Scrape nodes"
  ip_protocol                  = "tcp"
  from_port                    = var.ports.node_metrics
  to_port                      = var.ports.node_metrics
  referenced_security_group_id = aws_security_group.node.id
}

resource "aws_vpc_security_group_egress_rule" "prometheus_to_gateway" {
  security_group_id            = aws_security_group.prometheus.id
  description                  = "Scrape gateways"
  ip_protocol                  = "tcp"
  from_port                    = var.ports.gateway
  to_port                      = var.ports.gateway
  referenced_security_group_id = aws_security_group.gateway.id
}

# Redis: gateways and nodes in; no egress needed.
resource "aws_vpc_security_group_ingress_rule" "redis" {
  for_each = {
    gateway = aws_security_group.gateway.id
    node    = aws_security_group.node.id
  }
  security_group_id            = aws_security_group.redis.id
  description                  = "Redis (TLS) from ${each.key}s"
  ip_protocol                  = "tcp"
  from_port                    = var.ports.redis
  to_port                      = var.ports.redis
  referenced_security_group_id = each.value
}
