terraform {
  required_version = ">= 1.7"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.40, < 6.0"
    }
  }

  # Keep state remote and encrypted: it holds the Redis AUTH token. For example:
  # backend "s3" {
  #   bucket       = "my-terraform-state"
  #   key          = "tessera/prod.tfstate"
  #   region       = "us-east-1"
  #   encrypt      = true
  #   use_lockfile = true
  # }
}

provider "aws" {
  region = var.region

  default_tags {
    tags = merge({ "tessera:deployment" = var.name, "managed-by" = "terraform" }, var.tags)
  }
}
