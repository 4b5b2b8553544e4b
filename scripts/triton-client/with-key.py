# Runs one of NVIDIA's example clients unchanged, with the tenant key added to every call by a client plugin
# (tritonclient's own extension point), as a Triton user putting an authenticating gateway in front would.
import importlib
import os
import runpy
import sys

from tritonclient._plugin import InferenceServerClientPlugin


class BearerKey(InferenceServerClientPlugin):
    def __call__(self, request):
        request.headers["authorization"] = "Bearer " + os.environ["DEMO_KEY"]


def add_key_to_every_client(module_name):
    try:
        cls = importlib.import_module(module_name).InferenceServerClient
    except (ImportError, RuntimeError):
        return  # that flavour's dependencies are not installed: its examples fail on their own
    original = cls.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.register_plugin(BearerKey())

    cls.__init__ = init


for name in ("tritonclient.grpc", "tritonclient.grpc.aio", "tritonclient.http", "tritonclient.http.aio"):
    add_key_to_every_client(name)
script = sys.argv[1]
sys.argv = sys.argv[1:]
runpy.run_path(script, run_name="__main__")
