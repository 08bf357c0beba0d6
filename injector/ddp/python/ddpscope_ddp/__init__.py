"""DDP's own account, noted for ddpscope (see sitecustomize.py beside this).

install() adds an import hook that patches three torch modules once they have
been imported by the job itself (nothing is imported early):
  torch.nn.parallel.distributed    DDP's constructor, forward, comm hooks, join hook
  torch.distributed.distributed_c10d  the user's own collective calls
  torch.distributed.algorithms.join   the Join context's own collectives
  torch.distributed.fsdp._fully_shard._fsdp_param_group, ._fsdp_state
                                      FSDP2's units and their collectives
Each patch wraps a function: it calls the original with the same arguments and
returns its result, noting only the process group's sequence number before and
after, so the analysis can tell which collectives the wrapped code issued.
"""

import importlib.abc
import sys

from ddpscope_ddp import native


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs a patch right after a module's own code has run."""

    def __init__(self, patches):
        self._patches = dict(patches)

    def find_spec(self, name, path, target=None):
        if name not in self._patches:
            return None
        spec = None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        patch = self._patches.pop(name)
        exec_module = spec.loader.exec_module

        def exec_then_patch(module):
            exec_module(module)
            try:
                patch(module)
            except Exception as e:  # a torch we do not know: record without it
                native.notice(f"could not follow {name} ({type(e).__name__}: {e})")

        spec.loader.exec_module = exec_then_patch
        return spec


def install():
    if not native.load():
        return
    from ddpscope_ddp import c10d_patches, ddp_patches, fsdp_patches

    sys.meta_path.insert(
        0,
        _AfterImport(
            {
                "torch.nn.parallel.distributed": ddp_patches.patch,
                "torch.distributed.distributed_c10d": c10d_patches.patch_collectives,
                "torch.distributed.algorithms.join": c10d_patches.patch_join,
                "torch.distributed.fsdp._fully_shard._fsdp_param_group":
                    fsdp_patches.patch_param_group,
                "torch.distributed.fsdp._fully_shard._fsdp_state": fsdp_patches.patch_state,
            }
        ),
    )
