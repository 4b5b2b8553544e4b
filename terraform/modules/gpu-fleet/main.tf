# The GPU node fleet: one launch template (GPU types only, IMDSv2, encrypted gp3 root, instance profile,
# user data from modules/node-user-data) and two Auto Scaling groups built from it:
#
#  - "<name>-od": on-demand baseline with a warm pool of stopped, pre-provisioned instances. AWS refuses
#    warm pools on groups with a mixed instances policy or spot (PutWarmPool), hence two groups.
#  - "<name>-spot": burst capacity, mixed instances policy over every instance type, spot with an optional
#    on-demand share, capacity rebalancing.
#
# Both carry a launch hook (completed by the node once /v2/health/ready answers) and a termination hook
# (completed once tessera-node has drained), and scale on the fleet's average queue time per request.

data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

locals {
  tags      = merge({ "tessera:deployment" = var.name, "tessera:role" = "gpu-node" }, var.tags)
  partition = data.aws_partition.current.partition

  groups = {
    od   = "${var.name}-od"
    spot = "${var.name}-spot"
  }
  launch_hook_name      = "${var.name}-ready"
  termination_hook_name = "${var.name}-drain"

  s3_match  = regex("^(?:s3://([^/]+)/?(.*))?", var.model_repository_url)
  s3_bucket = local.s3_match[0]
  s3_prefix = local.s3_match[1] == null ? "" : trimsuffix(local.s3_match[1], "/")

  launch_hook_timeout      = var.readiness_timeout_secs + 300
  termination_hook_timeout = var.exit_timeout_secs + 90

  # IAM statements for an s3:// repository: list and read that prefix only (none for a local path).
  s3_arn = "arn:${local.partition}:s3:::${local.s3_bucket == null ? "none" : local.s3_bucket}"
  s3_statements = [
    for s in [
      merge({
        Sid      = "ListModelRepository"
        Effect   = "Allow"
        Action   = ["s3:ListBucket"]
        Resource = [local.s3_arn]
        }, local.s3_prefix == "" ? {} : {
        Condition = { StringLike = { "s3:prefix" = [local.s3_prefix, "${local.s3_prefix}/*"] } }
      }),
      {
        Sid      = "ReadModelRepository"
        Effect   = "Allow"
        Action   = ["s3:GetObject"]
        Resource = [local.s3_prefix == "" ? "${local.s3_arn}/*" : "${local.s3_arn}/${local.s3_prefix}/*"]
      },
    ] : s if local.s3_bucket != null
  ]
}

module "user_data" {
  source = "../node-user-data"

  fleet_name             = var.name
  model_repository_url   = var.model_repository_url
  model_repository_mode  = var.model_repository_mode
  model_control_mode     = var.model_control_mode
  redis_url_secret_arn   = var.redis_url_secret_arn
  install_dir            = var.install_dir
  node_binary            = var.node_binary
  exit_timeout_secs      = var.exit_timeout_secs
  readiness_timeout_secs = var.readiness_timeout_secs
  launch_hook_name       = local.launch_hook_name
  termination_hook_name  = local.termination_hook_name
  metrics_namespace      = var.metrics_namespace
  extra_node_args        = var.extra_node_args
}

# ---------------------------------------------------------------------------------------------------------
# Instance profile: read the model repository prefix and the REDIS_URL secret, complete this fleet's
# lifecycle actions, publish metrics (CloudWatch agent), and optionally Session Manager.

resource "aws_iam_role" "node" {
  name_prefix = "${var.name}-node-"
  description = "Tessera GPU nodes of ${var.name}"
  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Principal = { Service = "ec2.amazonaws.com" }
      Action    = "sts:AssumeRole"
    }]
  })
  tags = local.tags
}

resource "aws_iam_role_policy" "node" {
  name = "tessera-node"
  role = aws_iam_role.node.id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = concat(
      local.s3_statements,
      [
        {
          Sid      = "ReadRedisUrl"
          Effect   = "Allow"
          Action   = ["secretsmanager:GetSecretValue"]
          Resource = [var.redis_url_secret_arn]
        },
        {
          Sid    = "CompleteOwnLifecycleActions"
          Effect = "Allow"
          Action = ["autoscaling:CompleteLifecycleAction", "autoscaling:RecordLifecycleActionHeartbeat"]
          Resource = [
            for g in values(local.groups) :
            "arn:${local.partition}:autoscaling:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}:autoScalingGroup:*:autoScalingGroupName/${g}"
          ]
        },
      ],
    )
  })
}

resource "aws_iam_role_policy_attachment" "cloudwatch_agent" {
  role       = aws_iam_role.node.name
  policy_arn = "arn:${local.partition}:iam::aws:policy/CloudWatchAgentServerPolicy"
}

resource "aws_iam_role_policy_attachment" "ssm" {
  count      = var.enable_ssm ? 1 : 0
  role       = aws_iam_role.node.name
  policy_arn = "arn:${local.partition}:iam::aws:policy/AmazonSSMManagedInstanceCore"
}

resource "aws_iam_instance_profile" "node" {
  name_prefix = "${var.name}-node-"
  role        = aws_iam_role.node.name
  tags        = local.tags
}

# ---------------------------------------------------------------------------------------------------------

resource "aws_launch_template" "node" {
  name_prefix            = "${var.name}-node-"
  description            = "Tessera GPU node (${var.name})"
  image_id               = var.ami_id
  instance_type          = var.instance_types[0]
  vpc_security_group_ids = var.security_group_ids
  user_data              = base64encode(module.user_data.user_data)
  update_default_version = true
  ebs_optimized          = true

  iam_instance_profile {
    arn = aws_iam_instance_profile.node.arn
  }

  metadata_options {
    http_endpoint               = "enabled"
    http_tokens                 = "required" # IMDSv2 only
    http_put_response_hop_limit = 1
    instance_metadata_tags      = "enabled" # the lifecycle handler reads aws:autoscaling:groupName
  }

  block_device_mappings {
    device_name = var.root_volume.device_name
    ebs {
      volume_type           = "gp3"
      volume_size           = var.root_volume.size_gb
      iops                  = var.root_volume.iops
      throughput            = var.root_volume.throughput
      encrypted             = "true"
      kms_key_id            = var.kms_key_arn
      delete_on_termination = "true"
    }
  }

  monitoring {
    enabled = true
  }

  tag_specifications {
    resource_type = "instance"
    tags          = merge(local.tags, { Name = "${var.name}-node" })
  }

  tag_specifications {
    resource_type = "volume"
    tags          = local.tags
  }

  tags = local.tags
}

resource "aws_autoscaling_group" "od" {
  name                      = local.groups.od
  min_size                  = var.on_demand.min_size
  max_size                  = var.on_demand.max_size
  desired_capacity          = var.on_demand.desired_capacity
  vpc_zone_identifier       = var.subnet_ids
  health_check_type         = "EC2"
  default_instance_warmup   = var.instance_warmup_secs
  wait_for_capacity_timeout = "0"
  termination_policies      = ["OldestLaunchTemplate", "Default"]

  launch_template {
    id      = aws_launch_template.node.id
    version = aws_launch_template.node.latest_version
  }

  initial_lifecycle_hook {
    name                 = local.launch_hook_name
    lifecycle_transition = "autoscaling:EC2_INSTANCE_LAUNCHING"
    default_result       = "ABANDON"
    heartbeat_timeout    = local.launch_hook_timeout
  }

  initial_lifecycle_hook {
    name                 = local.termination_hook_name
    lifecycle_transition = "autoscaling:EC2_INSTANCE_TERMINATING"
    default_result       = "CONTINUE"
    heartbeat_timeout    = local.termination_hook_timeout
  }

  dynamic "warm_pool" {
    for_each = var.warm_pool.enabled ? [var.warm_pool] : []
    content {
      pool_state                  = "Stopped"
      min_size                    = warm_pool.value.min_size
      max_group_prepared_capacity = warm_pool.value.max_group_prepared_capacity
      instance_reuse_policy {
        reuse_on_scale_in = warm_pool.value.reuse_on_scale_in
      }
    }
  }

  dynamic "tag" {
    for_each = merge(local.tags, { Name = "${var.name}-node", "tessera:capacity" = "on-demand" })
    content {
      key                 = tag.key
      value               = tag.value
      propagate_at_launch = true
    }
  }

  # The scaling policy owns the desired capacity after the first apply.
  lifecycle {
    ignore_changes = [desired_capacity]
  }

  depends_on = [aws_iam_role_policy.node]
}

resource "aws_autoscaling_group" "spot" {
  name                      = local.groups.spot
  min_size                  = var.spot.min_size
  max_size                  = var.spot.max_size
  desired_capacity          = var.spot.desired_capacity
  vpc_zone_identifier       = var.subnet_ids
  health_check_type         = "EC2"
  default_instance_warmup   = var.instance_warmup_secs
  wait_for_capacity_timeout = "0"
  capacity_rebalance        = true

  mixed_instances_policy {
    instances_distribution {
      on_demand_base_capacity                  = var.spot.on_demand_base_capacity
      on_demand_percentage_above_base_capacity = var.spot.on_demand_percentage
      spot_allocation_strategy                 = var.spot.spot_allocation_strategy
    }

    launch_template {
      launch_template_specification {
        launch_template_id = aws_launch_template.node.id
        version            = aws_launch_template.node.latest_version
      }

      dynamic "override" {
        for_each = var.instance_types
        content {
          instance_type = override.value
        }
      }
    }
  }

  initial_lifecycle_hook {
    name                 = local.launch_hook_name
    lifecycle_transition = "autoscaling:EC2_INSTANCE_LAUNCHING"
    default_result       = "ABANDON"
    heartbeat_timeout    = local.launch_hook_timeout
  }

  initial_lifecycle_hook {
    name                 = local.termination_hook_name
    lifecycle_transition = "autoscaling:EC2_INSTANCE_TERMINATING"
    default_result       = "CONTINUE"
    heartbeat_timeout    = local.termination_hook_timeout
  }

  dynamic "tag" {
    for_each = merge(local.tags, { Name = "${var.name}-node", "tessera:capacity" = "spot" })
    content {
      key                 = tag.key
      value               = tag.value
      propagate_at_launch = true
    }
  }

  lifecycle {
    ignore_changes = [desired_capacity]
  }

  depends_on = [aws_iam_role_policy.node]
}

# ---------------------------------------------------------------------------------------------------------
# Scaling on queue time. Each node's CloudWatch agent scrapes its own /metrics (modules/node-user-data) and
# publishes the per-scrape increase of two Triton counters under dimension Fleet=<name>; the policy tracks
#   sum(nv_inference_queue_duration_us) / sum(nv_inference_request_success) / 1000
# = the fleet's average queue time per request in milliseconds. Both groups track the same target: the
# spot group adds burst capacity on top of the on-demand baseline (set spot.max_size = 0 to turn it off).

resource "aws_autoscaling_policy" "queue_time" {
  for_each = {
    od   = aws_autoscaling_group.od.name
    spot = aws_autoscaling_group.spot.name
  }

  name                      = "${var.name}-${each.key}-queue-time"
  autoscaling_group_name    = each.value
  policy_type               = "TargetTrackingScaling"
  estimated_instance_warmup = var.instance_warmup_secs

  target_tracking_configuration {
    target_value     = var.queue_time_target_ms
    disable_scale_in = false

    customized_metric_specification {
      metrics {
        id          = "queue_us"
        label       = "Queue time, us (sum over the fleet)"
        return_data = false
        metric_stat {
          stat = "Sum"
          metric {
            namespace   = var.metrics_namespace
            metric_name = "nv_inference_queue_duration_us"
            dimensions {
              name  = "Fleet"
              value = var.name
            }
          }
        }
      }

      metrics {
        id          = "requests"
        label       = "Successful requests (sum over the fleet)"
        return_data = false
        metric_stat {
          stat = "Sum"
          metric {
            namespace   = var.metrics_namespace
            metric_name = "nv_inference_request_success"
            dimensions {
              name  = "Fleet"
              value = var.name
            }
          }
        }
      }

      metrics {
        id          = "queue_ms_per_request"
        label       = "Average queue time per request, ms"
        expression  = "IF(requests > 0, queue_us / requests / 1000, 0)"
        return_data = true
      }
    }
  }
}
