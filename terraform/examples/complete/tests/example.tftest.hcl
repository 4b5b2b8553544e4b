# The whole example, wired together, against a mocked AWS provider (every module runs under the mock).

mock_provider "aws" {
  mock_data "aws_partition" {
    defaults = { partition = "aws" }
  }
  mock_data "aws_region" {
    defaults = { name = "us-east-1" }
  }
  mock_data "aws_caller_identity" {
    defaults = { account_id = "123456789012" }
  }
  mock_resource "aws_launch_template" {
    defaults = { id = "lt-0123456789abcdef0", latest_version = 1 }
  }
  mock_resource "aws_secretsmanager_secret" {
    defaults = { arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:tessera/redis-url-AbCdEf" }
  }
  mock_resource "aws_lb" {
    defaults = {
      arn      = "arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/tessera-gw/0123456789abcdef"
      dns_name = "tessera-gw-123.us-east-1.elb.amazonaws.com"
    }
  }
  mock_resource "aws_lb_listener" {
    defaults = { arn = "arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/tessera-test-gw/0123456789abcdef/0123456789abcdef" }
  }
  mock_resource "aws_lb_target_group" {
    defaults = { arn = "arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/tessera-gw/0123456789abcdef" }
  }
  mock_resource "aws_iam_instance_profile" {
    defaults = { arn = "arn:aws:iam::123456789012:instance-profile/tessera-1" }
  }
}

variables {
  certificate_arn      = "arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-0000-0000-000000000000"
  gateway_ami_id       = "ami-0123456789abcdef0"
  gpu_ami_id           = "ami-0fedcba9876543210"
  admin_key_hash       = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
  model_repository_url = "s3://my-tessera-models/prod"
  redis_auth_token     = "0123456789abcdef0123456789abcdef"
}

run "stack_wires_together" {
  command = apply

  assert {
    condition     = output.gateway_url == "https://tessera-gw-123.us-east-1.elb.amazonaws.com"
    error_message = "The example must output the gateway's HTTPS URL."
  }

  assert {
    condition     = output.node_autoscaling_groups == { od = "tessera-od", spot = "tessera-spot" }
    error_message = "Two node groups: on-demand with warm pool, spot burst."
  }

  assert {
    condition = alltrue([
      for r in values(output.node_ingress_rules) :
      r.cidr_ipv4 == null && r.cidr_ipv6 == null && r.prefix_list_id == null &&
      contains([output.security_group_ids.gateway, output.security_group_ids.prometheus], r.referenced_security_group_id)
    ]) && length(output.node_ingress_rules) == 3
    error_message = "Node ports (8000/8001/8002) must be open only to the gateway and Prometheus security groups, never to 0.0.0.0/0."
  }

  assert {
    condition     = strcontains(module.gpu_fleet.user_data, "--secret-id 'arn:aws:secretsmanager:us-east-1:123456789012:secret:tessera/redis-url-AbCdEf'") && strcontains(module.gateway.user_data, "--secret-id 'arn:aws:secretsmanager:us-east-1:123456789012:secret:tessera/redis-url-AbCdEf'")
    error_message = "Nodes and gateways must read REDIS_URL from the redis module's secret."
  }

  assert {
    condition     = strcontains(module.gpu_fleet.user_data, "aws s3 sync --region \"$region\" --delete --only-show-errors 's3://my-tessera-models/prod' '/var/lib/tessera/models'")
    error_message = "Nodes must sync the configured model repository."
  }

  assert {
    condition     = output.queue_time_metric.dimension.Fleet == "tessera" && contains(output.queue_time_metric.metrics, "nv_inference_queue_duration_us")
    error_message = "The fleet scales on its queue-time metric."
  }
}
