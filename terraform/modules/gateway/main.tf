# The gateway tier: an HTTPS Application Load Balancer (TLS 1.3 policy, HTTP redirected to HTTPS, invalid
# headers dropped) in front of an Auto Scaling group of gateway instances in private subnets. Gateways find
# the GPU nodes through the load reports the nodes publish to Redis.

data "aws_partition" "current" {}

locals {
  tags      = merge({ "tessera:deployment" = var.name, "tessera:role" = "gateway" }, var.tags)
  partition = data.aws_partition.current.partition

  config = merge({
    host         = "0.0.0.0"
    port         = var.port
    adminKeyHash = var.admin_key_hash
    keyPrefix    = "tessera:"
    # /metrics behind the admin key (and never forwarded by the load balancer, below); a private
    # Prometheus network may set metrics.requireAdminKey = false through gateway_config.
    metrics = { requireAdminKey = true }
  }, var.gateway_config)

  user_data = templatefile("${path.module}/templates/user-data.sh.tftpl", {
    config_json          = jsonencode(local.config)
    redis_url_secret_arn = var.redis_url_secret_arn
    install_dir          = var.install_dir
    node_binary          = var.node_binary
    port                 = var.port
  })
}

resource "aws_lb" "this" {
  name                       = "${var.name}-gw"
  load_balancer_type         = "application"
  internal                   = var.internal
  subnets                    = var.public_subnet_ids
  security_groups            = var.alb_security_group_ids
  drop_invalid_header_fields = true
  enable_deletion_protection = var.deletion_protection
  idle_timeout               = 120
  tags                       = local.tags
}

resource "aws_lb_target_group" "gateway" {
  name                 = "${var.name}-gw"
  port                 = var.port
  protocol             = "HTTP"
  vpc_id               = var.vpc_id
  target_type          = "instance"
  deregistration_delay = 30

  health_check {
    path                = "/v2/health/ready"
    matcher             = "200"
    interval            = 10
    timeout             = 5
    healthy_threshold   = 2
    unhealthy_threshold = 2
  }

  tags = local.tags
}

resource "aws_lb_listener" "https" {
  load_balancer_arn = aws_lb.this.arn
  port              = 443
  protocol          = "HTTPS"
  ssl_policy        = var.ssl_policy
  certificate_arn   = var.certificate_arn

  default_action {
    type             = "forward"
    target_group_arn = aws_lb_target_group.gateway.arn
  }

  tags = local.tags
}

# /metrics is not the internet's: the load balancer answers 404 itself and never forwards it (nor any
# path under it); Prometheus scrapes the gateways inside the VPC, with the admin key.
resource "aws_lb_listener_rule" "no_metrics" {
  listener_arn = aws_lb_listener.https.arn
  priority     = 1

  condition {
    path_pattern {
      # Also behind extra slashes or a prefix the gateway would normalize away.
      values = ["/metrics", "/metrics/*", "*/metrics", "*/metrics/*"]
    }
  }

  action {
    type = "fixed-response"
    fixed_response {
      content_type = "application/json"
      message_body = "{\"error\":\"Not Found\"}"
      status_code  = "404"
    }
  }

  tags = local.tags
}

resource "aws_lb_listener" "http_redirect" {
  load_balancer_arn = aws_lb.this.arn
  port              = 80
  protocol          = "HTTP"

  default_action {
    type = "redirect"
    redirect {
      protocol    = "HTTPS"
      port        = "443"
      status_code = "HTTP_301"
    }
  }

  tags = local.tags
}

resource "aws_iam_role" "gateway" {
  name_prefix = "${var.name}-gateway-"
  description = "Tessera gateways of ${var.name}"
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

resource "aws_iam_role_policy" "gateway" {
  name = "tessera-gateway"
  role = aws_iam_role.gateway.id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid      = "ReadRedisUrl"
      Effect   = "Allow"
      Action   = ["secretsmanager:GetSecretValue"]
      Resource = [var.redis_url_secret_arn]
    }]
  })
}

resource "aws_iam_role_policy_attachment" "ssm" {
  count      = var.enable_ssm ? 1 : 0
  role       = aws_iam_role.gateway.name
  policy_arn = "arn:${local.partition}:iam::aws:policy/AmazonSSMManagedInstanceCore"
}

resource "aws_iam_instance_profile" "gateway" {
  name_prefix = "${var.name}-gateway-"
  role        = aws_iam_role.gateway.name
  tags        = local.tags
}

resource "aws_launch_template" "gateway" {
  name_prefix            = "${var.name}-gateway-"
  description            = "Tessera gateway (${var.name})"
  image_id               = var.ami_id
  instance_type          = var.instance_type
  vpc_security_group_ids = var.gateway_security_group_ids
  user_data              = base64encode(local.user_data)
  update_default_version = true

  iam_instance_profile {
    arn = aws_iam_instance_profile.gateway.arn
  }

  metadata_options {
    http_endpoint               = "enabled"
    http_tokens                 = "required"
    http_put_response_hop_limit = 1
  }

  block_device_mappings {
    device_name = "/dev/xvda"
    ebs {
      volume_type           = "gp3"
      volume_size           = 30
      encrypted             = "true"
      kms_key_id            = var.kms_key_arn
      delete_on_termination = "true"
    }
  }

  tag_specifications {
    resource_type = "instance"
    tags          = merge(local.tags, { Name = "${var.name}-gateway" })
  }

  tags = local.tags
}

resource "aws_autoscaling_group" "gateway" {
  name                      = "${var.name}-gateway"
  min_size                  = var.capacity.min_size
  max_size                  = var.capacity.max_size
  desired_capacity          = var.capacity.desired_capacity
  vpc_zone_identifier       = var.private_subnet_ids
  target_group_arns         = [aws_lb_target_group.gateway.arn]
  health_check_type         = "ELB"
  health_check_grace_period = 120
  wait_for_capacity_timeout = "0"

  launch_template {
    id      = aws_launch_template.gateway.id
    version = aws_launch_template.gateway.latest_version
  }

  instance_refresh {
    strategy = "Rolling"
    preferences {
      min_healthy_percentage = 50
    }
  }

  dynamic "tag" {
    for_each = merge(local.tags, { Name = "${var.name}-gateway" })
    content {
      key                 = tag.key
      value               = tag.value
      propagate_at_launch = true
    }
  }

  lifecycle {
    ignore_changes = [desired_capacity]
  }

  depends_on = [aws_iam_role_policy.gateway]
}

resource "aws_autoscaling_policy" "cpu" {
  name                   = "${var.name}-gateway-cpu"
  autoscaling_group_name = aws_autoscaling_group.gateway.name
  policy_type            = "TargetTrackingScaling"

  target_tracking_configuration {
    target_value = 60
    predefined_metric_specification {
      predefined_metric_type = "ASGAverageCPUUtilization"
    }
  }
}
