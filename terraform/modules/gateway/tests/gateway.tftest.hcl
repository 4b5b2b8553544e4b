mock_provider "aws" {
  mock_data "aws_partition" {
    defaults = { partition = "aws" }
  }
  mock_resource "aws_lb" {
    defaults = { arn = "arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/tessera-test-gw/0123456789abcdef", dns_name = "tessera-test-gw-123.us-east-1.elb.amazonaws.com" }
  }
  mock_resource "aws_lb_listener" {
    defaults = { arn = "arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/tessera-test-gw/0123456789abcdef/0123456789abcdef" }
  }
  mock_resource "aws_lb_target_group" {
    defaults = { arn = "arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/tessera-test-gw/0123456789abcdef" }
  }
  mock_resource "aws_launch_template" {
    defaults = { id = "lt-0123456789abcdef0", latest_version = 1 }
  }
  mock_resource "aws_iam_instance_profile" {
    defaults = { arn = "arn:aws:iam::123456789012:instance-profile/tessera-test-gateway-1" }
  }
}

variables {
  name                       = "tessera-test"
  vpc_id                     = "vpc-1"
  public_subnet_ids          = ["subnet-pa", "subnet-pb"]
  private_subnet_ids         = ["subnet-a", "subnet-b"]
  alb_security_group_ids     = ["sg-alb"]
  gateway_security_group_ids = ["sg-gateway"]
  certificate_arn            = "arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-0000-0000-000000000000"
  ami_id                     = "ami-0123456789abcdef0"
  redis_url_secret_arn       = "arn:aws:secretsmanager:us-east-1:123456789012:secret:tessera-test/redis-url-AbCdEf"
  admin_key_hash             = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
  gateway_config             = { tiers = { free = { rateLimits = { requestsPerSecond = 2 } } } }
}

run "https_front_door_and_locked_down_instances" {
  command = apply

  assert {
    condition     = aws_lb_listener.https.protocol == "HTTPS" && aws_lb_listener.https.port == 443 && startswith(aws_lb_listener.https.ssl_policy, "ELBSecurityPolicy-TLS13")
    error_message = "The load balancer must terminate TLS (1.2+/1.3 policy) on 443."
  }

  assert {
    condition     = aws_lb_listener.http_redirect.default_action[0].type == "redirect" && aws_lb_listener.http_redirect.default_action[0].redirect[0].protocol == "HTTPS"
    error_message = "Plain HTTP may only redirect to HTTPS."
  }

  assert {
    condition     = aws_lb.this.drop_invalid_header_fields && aws_lb_target_group.gateway.health_check[0].path == "/v2/health/ready" && aws_lb_target_group.gateway.port == 8080
    error_message = "Targets are the gateways on 8080, checked on /v2/health/ready."
  }

  assert {
    condition     = aws_autoscaling_group.gateway.health_check_type == "ELB" && aws_autoscaling_group.gateway.desired_capacity == 2 && contains(aws_autoscaling_group.gateway.target_group_arns, aws_lb_target_group.gateway.arn)
    error_message = "Two gateways by default, registered with the target group and replaced when unhealthy."
  }

  assert {
    condition     = output.url == "https://tessera-test-gw-123.us-east-1.elb.amazonaws.com"
    error_message = "The url output is the HTTPS address of the load balancer."
  }

  assert {
    condition     = aws_launch_template.gateway.metadata_options[0].http_tokens == "required"
    error_message = "Gateways must require IMDSv2."
  }

  assert {
    condition     = alltrue([for b in aws_launch_template.gateway.block_device_mappings : b.ebs[0].encrypted == "true" && b.ebs[0].volume_type == "gp3"])
    error_message = "Gateway volumes must be encrypted gp3."
  }

  assert {
    condition = (
      strcontains(output.user_data, "--config /etc/tessera/gateway.json --port 8080") &&
      output.config.adminKeyHash == var.admin_key_hash &&
      output.config.tiers.free.rateLimits.requestsPerSecond == 2 &&
      strcontains(output.user_data, jsonencode(output.config)) &&
      !strcontains(output.user_data, "rediss://")
    )
    error_message = "User data writes the merged config and runs tessera-gateway on it; REDIS_URL only from Secrets Manager."
  }
}

run "metrics_never_reach_the_internet" {
  command = apply

  assert {
    condition = (
      aws_lb_listener_rule.no_metrics.listener_arn == aws_lb_listener.https.arn &&
      aws_lb_listener_rule.no_metrics.priority == 1 &&
      contains(tolist(one(aws_lb_listener_rule.no_metrics.condition).path_pattern[0].values), "/metrics") &&
      aws_lb_listener_rule.no_metrics.action[0].type == "fixed-response" &&
      aws_lb_listener_rule.no_metrics.action[0].fixed_response[0].status_code == "404"
    )
    error_message = "The load balancer must answer /metrics itself (404), before the default forward to the gateways."
  }

  assert {
    condition     = output.config.metrics.requireAdminKey
    error_message = "The gateway's /metrics must need the admin key by default."
  }
}

run "rejects_plain_admin_key" {
  command = plan

  variables {
    admin_key_hash = "my-admin-key"
  }

  expect_failures = [var.admin_key_hash]
}
