# Offline: the AWS provider is mocked; these runs check the fleet's own settings.

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
  mock_resource "aws_secretsmanager_secret" {
    defaults = { arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:tessera-test/node-admin-key-AbCdEf" }
  }
  mock_resource "aws_iam_instance_profile" {
    defaults = { arn = "arn:aws:iam::123456789012:instance-profile/tessera-test-node-1" }
  }
  mock_resource "aws_launch_template" {
    defaults = { id = "lt-0123456789abcdef0", latest_version = 1 }
  }
}

variables {
  name                 = "tessera-test"
  ami_id               = "ami-0123456789abcdef0"
  instance_types       = ["g5.xlarge", "g6.xlarge", "g4dn.xlarge"]
  subnet_ids           = ["subnet-a", "subnet-b"]
  security_group_ids   = ["sg-node"]
  model_repository_url = "s3://tessera-models/prod"
  redis_url_secret_arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:tessera-test/redis-url-AbCdEf"
}

run "fleet" {
  command = apply

  assert {
    condition     = aws_launch_template.node.metadata_options[0].http_tokens == "required" && aws_launch_template.node.metadata_options[0].http_endpoint == "enabled" && aws_launch_template.node.metadata_options[0].http_put_response_hop_limit == 1
    error_message = "Nodes must require IMDSv2 (session tokens), with a hop limit of 1."
  }

  assert {
    condition = alltrue([
      for b in aws_launch_template.node.block_device_mappings :
      b.ebs[0].encrypted == "true" && b.ebs[0].volume_type == "gp3"
    ])
    error_message = "Every volume must be encrypted gp3."
  }

  assert {
    condition     = aws_launch_template.node.block_device_mappings[0].ebs[0].volume_size == 200
    error_message = "The root volume must default to 200 GB (room for model repositories)."
  }

  assert {
    condition     = aws_launch_template.node.instance_type == "g5.xlarge" && aws_launch_template.node.iam_instance_profile[0].arn == "arn:aws:iam::123456789012:instance-profile/tessera-test-node-1"
    error_message = "The template launches the first GPU type with the fleet's instance profile."
  }

  assert {
    condition     = base64decode(aws_launch_template.node.user_data) == output.user_data && strcontains(output.user_data, "complete_hook 'tessera-test-drain' CONTINUE")
    error_message = "The template's user data must be the rendered node bootstrap with this fleet's hook names."
  }

  assert {
    condition     = aws_autoscaling_group.od.desired_capacity == 1 && aws_autoscaling_group.od.min_size == 1 && aws_autoscaling_group.od.max_size == 4
    error_message = "The on-demand group defaults to 1 desired (min 1, max 4)."
  }

  assert {
    condition     = aws_autoscaling_group.spot.desired_capacity == 0 && aws_autoscaling_group.spot.min_size == 0 && aws_autoscaling_group.spot.max_size == 8
    error_message = "The spot group defaults to 0 desired (min 0, max 8)."
  }

  assert {
    condition     = length(aws_autoscaling_group.od.warm_pool) == 1 && aws_autoscaling_group.od.warm_pool[0].pool_state == "Stopped" && aws_autoscaling_group.od.warm_pool[0].min_size == 1
    error_message = "The on-demand group must keep a stopped warm pool."
  }

  assert {
    condition     = length(aws_autoscaling_group.od.mixed_instances_policy) == 0 && length(aws_autoscaling_group.spot.warm_pool) == 0
    error_message = "AWS allows no warm pool with a mixed instances policy: the warm pool stays on the on-demand group."
  }

  assert {
    condition = (
      aws_autoscaling_group.spot.mixed_instances_policy[0].instances_distribution[0].on_demand_percentage_above_base_capacity == 0 &&
      aws_autoscaling_group.spot.mixed_instances_policy[0].instances_distribution[0].spot_allocation_strategy == "price-capacity-optimized" &&
      aws_autoscaling_group.spot.capacity_rebalance
    )
    error_message = "The burst group is spot (price-capacity-optimized) with capacity rebalancing."
  }

  assert {
    condition = (
      [for o in aws_autoscaling_group.spot.mixed_instances_policy[0].launch_template[0].override : o.instance_type] == ["g5.xlarge", "g6.xlarge", "g4dn.xlarge"] &&
      alltrue([for o in aws_autoscaling_group.spot.mixed_instances_policy[0].launch_template[0].override : contains(["g4dn", "g5", "g6", "g6e", "gr6", "p3", "p3dn", "p4d", "p4de", "p5", "p5e", "p5en"], split(".", o.instance_type)[0])])
    )
    error_message = "Spot overrides must be exactly the GPU types given."
  }

  assert {
    condition = alltrue([
      for g in [aws_autoscaling_group.od, aws_autoscaling_group.spot] :
      length([
        for h in g.initial_lifecycle_hook : h
        if h.lifecycle_transition == "autoscaling:EC2_INSTANCE_TERMINATING" && h.name == "tessera-test-drain" && h.default_result == "CONTINUE" && h.heartbeat_timeout >= 30 + 60
      ]) == 1
    ])
    error_message = "Both groups need a termination hook that waits for the drain (exit timeout + margin)."
  }

  assert {
    condition = alltrue([
      for g in [aws_autoscaling_group.od, aws_autoscaling_group.spot] :
      length([
        for h in g.initial_lifecycle_hook : h
        if h.lifecycle_transition == "autoscaling:EC2_INSTANCE_LAUNCHING" && h.name == "tessera-test-ready" && h.default_result == "ABANDON"
      ]) == 1
    ])
    error_message = "Both groups need a launch hook that only lets ready nodes in service."
  }

  assert {
    condition = alltrue([
      for p in aws_autoscaling_policy.queue_time :
      p.policy_type == "TargetTrackingScaling" && p.target_tracking_configuration[0].target_value == 50
    ])
    error_message = "Both groups track the queue-time target (50 ms by default)."
  }

  assert {
    condition = alltrue([
      for p in aws_autoscaling_policy.queue_time :
      toset([for m in p.target_tracking_configuration[0].customized_metric_specification[0].metrics : m.metric_stat[0].metric[0].metric_name if length(m.metric_stat) > 0]) == toset(["nv_inference_queue_duration_us", "nv_inference_request_success"]) &&
      length([for m in p.target_tracking_configuration[0].customized_metric_specification[0].metrics : m if m.return_data]) == 1
    ])
    error_message = "The tracked metric must be queue time per request from the nodes' Prometheus counters."
  }

  assert {
    condition = (
      contains([for s in jsondecode(aws_iam_role_policy.node.policy).Statement : s.Resource[0] if s.Sid == "ReadModelRepository"], "arn:aws:s3:::tessera-models/prod/*") &&
      [for s in jsondecode(aws_iam_role_policy.node.policy).Statement : s.Condition.StringLike["s3:prefix"] if s.Sid == "ListModelRepository"][0] == ["prod", "prod/*"]
    )
    error_message = "The node may list and read the repository prefix only."
  }

  assert {
    condition = alltrue([
      for s in jsondecode(aws_iam_role_policy.node.policy).Statement :
      !contains(s.Action, "s3:PutObject") && !contains(s.Action, "s3:*") && !contains(s.Resource, "*")
    ])
    error_message = "No write access to the bucket and no wildcard resources."
  }

  assert {
    condition     = [for s in jsondecode(aws_iam_role_policy.node.policy).Statement : s.Resource if s.Sid == "CompleteOwnLifecycleActions"][0] == ["arn:aws:autoscaling:us-east-1:123456789012:autoScalingGroup:*:autoScalingGroupName/tessera-test-od", "arn:aws:autoscaling:us-east-1:123456789012:autoScalingGroup:*:autoScalingGroupName/tessera-test-spot"]
    error_message = "Nodes may complete lifecycle actions of their own groups only."
  }
}

run "warm_pool_can_be_turned_off" {
  command = plan

  variables {
    warm_pool = { enabled = false }
    on_demand = { min_size = 1, desired_capacity = 3, max_size = 6 }
  }

  assert {
    condition     = length(aws_autoscaling_group.od.warm_pool) == 0 && aws_autoscaling_group.od.max_size == 6
    error_message = "warm_pool.enabled = false drops the warm pool; sizes follow on_demand."
  }

  assert {
    condition     = aws_autoscaling_group.od.desired_capacity == 1
    error_message = "Once the group exists, the scaling policy owns desired_capacity: a changed variable must not reset it."
  }
}

run "rejects_cpu_instance_types_and_bad_sizes" {
  command = plan

  variables {
    instance_types = ["g5.xlarge", "m7i.2xlarge"]
    on_demand      = { min_size = 1, desired_capacity = 5, max_size = 4 }
  }

  expect_failures = [var.instance_types, var.on_demand]
}

run "rejects_non_cuda_gpu_families" {
  command = plan

  variables {
    instance_types = ["g4ad.xlarge"]
  }

  expect_failures = [var.instance_types]
}

run "repository_and_logging_apis_need_a_generated_key" {
  command = apply

  assert {
    condition = (
      aws_secretsmanager_secret_version.node_admin_key.secret_id == aws_secretsmanager_secret.node_admin_key.id &&
      output.node_admin_key_secret_arn == "arn:aws:secretsmanager:us-east-1:123456789012:secret:tessera-test/node-admin-key-AbCdEf" &&
      [for s in jsondecode(aws_iam_role_policy.node.policy).Statement : s.Resource if s.Sid == "ReadNodeAdminKey"][0] == [output.node_admin_key_secret_arn]
    )
    error_message = "The node admin key is generated into its own secret, which the nodes may read."
  }

  assert {
    condition = (
      strcontains(output.user_data, "--http-restricted-api=model-repository,logging:tessera-node-admin-key=$${TESSERA_NODE_ADMIN_KEY}") &&
      strcontains(output.user_data, "--grpc-restricted-protocol=model-repository,logging:admin-key=$${TESSERA_NODE_ADMIN_KEY}") &&
      strcontains(output.user_data, "--secret-id '${output.node_admin_key_secret_arn}'")
    )
    error_message = "Nodes restrict their repository and logging APIs on both endpoints to the generated key."
  }
}
