# Offline: every AWS resource is mocked, so these runs check the module's own logic (which rules exist,
# what they reference), not AWS. `terraform test` from terraform/check.sh.

mock_provider "aws" {
  mock_data "aws_region" {
    defaults = { name = "us-east-1" }
  }
}

variables {
  name               = "tessera-test"
  availability_zones = ["us-east-1a", "us-east-1b", "us-east-1c"]
}

run "node_ports_open_only_to_gateway_and_prometheus" {
  command = apply

  assert {
    condition     = length(aws_vpc_security_group_ingress_rule.node) == 3
    error_message = "The node security group must have exactly the three port rules (HTTP, gRPC, metrics)."
  }

  assert {
    condition = alltrue([
      for r in aws_vpc_security_group_ingress_rule.node :
      r.cidr_ipv4 == null && r.cidr_ipv6 == null && r.prefix_list_id == null
    ])
    error_message = "No node port may be open to a CIDR block or prefix list (0.0.0.0/0 included)."
  }

  assert {
    condition = alltrue([
      for r in aws_vpc_security_group_ingress_rule.node :
      contains([aws_security_group.gateway.id, aws_security_group.prometheus.id], r.referenced_security_group_id)
    ])
    error_message = "Node ports may only be opened to the gateway and Prometheus security groups."
  }

  assert {
    condition = (
      aws_vpc_security_group_ingress_rule.node["http-from-gateway"].from_port == 8000 &&
      aws_vpc_security_group_ingress_rule.node["http-from-gateway"].referenced_security_group_id == aws_security_group.gateway.id &&
      aws_vpc_security_group_ingress_rule.node["grpc-from-gateway"].from_port == 8001 &&
      aws_vpc_security_group_ingress_rule.node["grpc-from-gateway"].referenced_security_group_id == aws_security_group.gateway.id &&
      aws_vpc_security_group_ingress_rule.node["metrics-from-prometheus"].from_port == 8002 &&
      aws_vpc_security_group_ingress_rule.node["metrics-from-prometheus"].referenced_security_group_id == aws_security_group.prometheus.id
    )
    error_message = "8000/8001 must come from the gateway, 8002 from Prometheus."
  }

  assert {
    condition     = alltrue([for r in aws_vpc_security_group_ingress_rule.node : r.from_port == r.to_port])
    error_message = "Node rules must open single ports, not ranges."
  }

  assert {
    condition     = alltrue([for k, r in output.node_ingress_rules : r.cidr_ipv4 == null])
    error_message = "The node_ingress_rules output must report the same CIDR-free rules."
  }

  assert {
    condition     = aws_vpc_security_group_ingress_rule.gateway_from_alb.referenced_security_group_id == aws_security_group.alb.id && aws_vpc_security_group_ingress_rule.gateway_from_alb.cidr_ipv4 == null
    error_message = "Gateways must take client traffic only from the load balancer."
  }

  assert {
    condition = alltrue([
      for r in aws_vpc_security_group_ingress_rule.redis :
      r.cidr_ipv4 == null && r.from_port == 6379 && contains([aws_security_group.gateway.id, aws_security_group.node.id], r.referenced_security_group_id)
    ])
    error_message = "Redis must be reachable only from gateways and nodes."
  }

  assert {
    condition     = alltrue([for r in aws_vpc_security_group_ingress_rule.alb_https : r.from_port == 443])
    error_message = "The load balancer takes HTTPS on 443."
  }

  assert {
    condition     = length(aws_subnet.private) == 3 && length(aws_subnet.public) == 3 && length(aws_nat_gateway.this) == 1
    error_message = "One private and one public subnet per zone, one NAT gateway by default."
  }

  assert {
    condition     = alltrue([for s in aws_subnet.public : !s.map_public_ip_on_launch])
    error_message = "Nothing launched in a public subnet may get a public IP by default."
  }

  assert {
    condition = length(distinct(concat(aws_subnet.private[*].cidr_block, aws_subnet.public[*].cidr_block))) == 6 && alltrue([
      for c in aws_subnet.public[*].cidr_block : !anytrue([for p in aws_subnet.private[*].cidr_block : cidrhost(c, 0) == cidrhost(p, 0)])
    ])
    error_message = "Public and private subnets must be distinct."
  }

  assert {
    condition     = aws_subnet.private[0].cidr_block == "10.40.0.0/20" && aws_subnet.public[0].cidr_block == "10.40.255.0/24"
    error_message = "Unexpected subnet layout."
  }
}

run "nat_per_zone" {
  command = plan

  variables {
    single_nat_gateway = false
  }

  assert {
    condition     = length(aws_nat_gateway.this) == 3
    error_message = "single_nat_gateway = false must give one NAT gateway per zone."
  }
}

run "rejects_one_zone" {
  command = plan

  variables {
    availability_zones = ["us-east-1a"]
  }

  expect_failures = [var.availability_zones]
}
