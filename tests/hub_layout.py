"""A Hugging Face cache laid out by huggingface_hub's own functions (shared by the hub tests,
the fuzzer's hub-path class and the documented-commands install test)."""

from __future__ import annotations

import hashlib
from pathlib import Path


def lay_out(cache: Path, repo_id: str, repo_type: str, commit: str, files: dict[str, Path]) -> Path:
    """Put ``files`` (path in repo -> local file) into ``cache`` at ``commit`` exactly as
    huggingface_hub's downloads do: blob named by the sha256 of its bytes (the LFS etag), the
    snapshot's pointer made by ``_get_pointer_path`` and linked by ``_create_symlink``. Returns
    the repo's storage folder."""
    from huggingface_hub import file_download

    storage = cache / file_download.repo_folder_name(repo_id=repo_id, repo_type=repo_type)
    for rel, src in files.items():
        data = src.read_bytes()
        blob = storage / "blobs" / hashlib.sha256(data).hexdigest()
        blob.parent.mkdir(parents=True, exist_ok=True)
        new = not blob.exists()
        if new:
            blob.write_bytes(data)
        pointer = Path(file_download._get_pointer_path(str(storage), commit, rel))
        pointer.parent.mkdir(parents=True, exist_ok=True)
        file_download._create_symlink(str(blob), str(pointer), new_blob=new)
    return storage
