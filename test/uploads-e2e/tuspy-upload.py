"""Uploads a file with tuspy (Debian's python3-tuspy), sha1 checksums on every PATCH: test:uploads runs it.

Usage: tuspy-upload.py <endpoint> <api key> <file> <chunk bytes> [<upload url to resume>]
Prints one JSON line when the upload URL is known ({"url", "offset": where this run starts}), and one when
the upload is done ({"done": true, "offset", "algorithm"}).
"""
import json
import sys

from tusclient import client

endpoint, key, path, chunk = sys.argv[1:5]
resume = sys.argv[5] if len(sys.argv) > 5 else None

tus = client.TusClient(endpoint, headers={"Authorization": f"Bearer {key}"})
options = {
    "file_path": path,
    "chunk_size": int(chunk),
    "upload_checksum": True,
    "metadata": {"filename": "tuspy.mp4"},
}
if resume:
    # tuspy asks the server (HEAD) where to resume.
    options["url"] = resume
uploader = tus.uploader(**options)
if not uploader.url:
    uploader.set_url(uploader.create_url())
    uploader.offset = 0
print(json.dumps({"url": uploader.url, "offset": uploader.offset}), flush=True)
uploader.upload()
print(
    json.dumps({"done": True, "offset": uploader.offset, "algorithm": uploader.checksum_algorithm_name}),
    flush=True,
)
