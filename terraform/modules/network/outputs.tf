output "vpc_id" {
  description = "ID of the VPC."
  value       = aws_vpc.this.id
}

output "private_subnet_ids" {
  description = "Private subnets (one per zone): gateways, GPU nodes, Redis."
  value       = aws_subnet.private[*].id
}

output "public_subnet_ids" {
  description = "Public subnets (one per zone): the load balancer and NAT gateways."
  value       = aws_subnet.public[*].id
}

output "security_group_ids" {
  description = "Security groups by role: alb, gateway, node, prometheus (attach it to your Prometheus server), redis."
  value = {
    alb        = aws_security_group.alb.id
    gateway    = aws_security_group.gateway.id
    node       = aws_security_group.node.id
    prometheus = aws_security_group.prometheus.id
    redis      = aws_security_group.redis.id
  }
}

output "node_ingress_rules" {
  description = "Every ingress rule of the node security group (port, CIDR if any, source security group), for audits and tests."
  value = {
    for key, rule in aws_vpc_security_group_ingress_rule.node : key => {
      from_port                    = rule.from_port
      to_port                      = rule.to_port
      cidr_ipv4                    = rule.cidr_ipv4
      cidr_ipv6                    = rule.cidr_ipv6
      prefix_list_id               = rule.prefix_list_id
      referenced_security_group_id = rule.referenced_security_group_id
    }
  }
}
