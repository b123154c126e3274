"""The two-stage detector of examples/hooks_repo (docs/hooks.md "A two-stage detector") over
both protocols with tritonclient: the meta model detector calls detector_stage1 (proposals),
runs NMS in numpy and calls detector_stage2 (classes) on the kept boxes. Images of bright
squares at known places give exactly those boxes, classes and counts, and so does a lone
square at every position for the sides the example covers; stage 1 alone proposes duplicates
of each square that the meta's NMS suppresses; both stages are internal to the meta.

Tolerances: a box's corners are whole pixels computed from f32 moments, so they are compared
with an absolute tolerance of 1e-4 (pixels); a score is sigmoid(10 * c - 2) of the anchor
cell's mean intensity c, compared with a relative tolerance of 1e-6 (XLA's sigmoid against
numpy's). Classes, counts and the padding are exact."""

import os
import shutil

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

import reactant_export as rx
from conftest import ROOT
from tritonclient_fixtures import client, protocol  # noqa: F401 (pytest fixtures)

HOOKS_REPO = os.path.join(ROOT, "examples", "hooks_repo")
BUNDLES = ("detector", "detector_stage1", "detector_stage2")
MODULES = {"http": httpclient, "grpc": grpcclient}
K = 4
SMALL, LARGE, DIM = 0, 1, 2
BOX_ATOL = 1e-4
SCORE_RTOL = 1e-6


@pytest.fixture(scope="module")
def worker(server_binary, tmp_path_factory):
    repo = tmp_path_factory.mktemp("detector_repo")
    # Copies: whatever the server writes beside a bundle (its executable cache) stays here.
    for name in BUNDLES:
        shutil.copytree(os.path.join(HOOKS_REPO, name), repo / name)
    log = tmp_path_factory.mktemp("worker") / "server.log"
    with rx.Server(str(repo), binary=server_binary, log_path=str(log)) as s:
        yield s


def sigmoid(x):
    return np.float32(1) / (np.float32(1) + np.exp(-np.float32(x)))


def square(image, x0, y0, side, intensity=1.0):
    image[y0:y0 + side, x0:x0 + side, 0] = intensity
    return np.array([x0, y0, x0 + side, y0 + side], np.float32)


def two_squares():
    """A 6-pixel square at (3, 4) and a 10-pixel one at (17, 15); each fills an anchor's cell,
    so each scores sigmoid(8)."""
    image = np.zeros((32, 32, 1), np.float32)
    boxes = [square(image, 3, 4, 6), square(image, 17, 15, 10)]
    return image, boxes, [sigmoid(8), sigmoid(8)], [SMALL, LARGE]


def dim_and_small():
    """A small bright 5-pixel square at (5, 20), whose best anchor cell (rows 20..23, columns
    4..7) it covers by 12/16, and a dim (0.3) 8-pixel square at (20, 2), covering its cell."""
    image = np.zeros((32, 32, 1), np.float32)
    bright = square(image, 5, 20, 5)
    dim = square(image, 20, 2, 8, intensity=0.3)
    return image, [bright, dim], [sigmoid(10 * 0.75 - 2), sigmoid(10 * 0.3 - 2)], [SMALL, DIM]


def infer(client, protocol, model, image):
    x = MODULES[protocol].InferInput("image", list(image.shape), "FP32")
    x.set_data_from_numpy(image)
    r = client.infer(model, [x])
    return {name: r.as_numpy(name) for name in ("boxes", "scores", "classes", "count")}


def check(got, row, boxes, scores, classes):
    """Row `row` of an answer holds exactly these detections, then padding."""
    count = len(boxes)
    assert got["count"][row] == count
    assert got["count"].dtype == np.int32 and got["classes"].dtype == np.int64
    np.testing.assert_allclose(got["boxes"][row, :count], np.array(boxes).reshape(count, 4),
                               rtol=0, atol=BOX_ATOL)
    np.testing.assert_allclose(got["scores"][row, :count], np.array(scores), rtol=SCORE_RTOL)
    assert got["classes"][row].tolist() == classes + [-1] * (K - count)
    assert not got["boxes"][row, count:].any() and not got["scores"][row, count:].any()


def test_two_squares_give_their_boxes_and_classes(client, protocol):
    image, boxes, scores, classes = two_squares()
    got = infer(client, protocol, "detector", image[None])
    assert got["boxes"].shape == (1, K, 4) and got["scores"].shape == (1, K)
    check(got, 0, boxes, scores, classes)


def test_a_batch_of_images(client, protocol):
    (a, *want_a), (b, *want_b) = two_squares(), dim_and_small()
    got = infer(client, protocol, "detector", np.stack([a, b]))
    check(got, 0, *want_a)
    check(got, 1, *want_b)
    # Five images, more than stage 1's largest compiled batch (4): split, the same answers;
    # an empty image has no detection.
    empty = np.zeros_like(a)
    got = infer(client, protocol, "detector", np.stack([a, b, empty, b, a]))
    for row, want in ((0, want_a), (1, want_b), (3, want_b), (4, want_a)):
        check(got, row, *want)
    check(got, 2, [], [], [])


@pytest.mark.parametrize("intensity, sides", [(1.0, range(3, 12)), (0.3, range(7, 12))])
def test_a_lone_square_anywhere_is_found_exactly_once(client, protocol, intensity, sides):
    """Every position of a lone square whose side the example covers everywhere (3..11 pixels
    bright, 7..11 dim): one detection, its exact box, its class. One request per side."""
    for side in sides:
        images, boxes = [], []
        for y in range(33 - side):
            for x in range(33 - side):
                image = np.zeros((32, 32, 1), np.float32)
                boxes.append(square(image, x, y, side, intensity))
                images.append(image)
        got = infer(client, protocol, "detector", np.stack(images))
        assert got["count"].tolist() == [1] * len(images), side
        np.testing.assert_allclose(got["boxes"][:, 0], np.array(boxes), rtol=0, atol=BOX_ATOL)
        want = DIM if intensity < 0.5 else SMALL if side < 8 else LARGE
        assert (got["classes"][:, 0] == want).all() and (got["classes"][:, 1:] == -1).all()


def meta_code():
    """The example's model.py as a module: nms, iou, roi_pool, run."""
    path = os.path.join(HOOKS_REPO, "detector", "model.py")
    namespace = {"__file__": path, "register_meta_model": lambda *a, **k: None}
    with open(path) as f:
        exec(compile(f.read(), path, "exec"), namespace)
    return namespace


def test_nms_suppresses_overlaps_and_keeps_order():
    nms, iou = meta_code()["nms"], meta_code()["iou"]
    boxes = np.array([[0, 0, 10, 10],     # 0: kept first (best score)
                      [1, 1, 11, 11],     # 1: IoU 81/119 with 0: suppressed
                      [20, 20, 30, 30],   # 2: kept
                      [0, 0, 10, 10],     # 3: a duplicate of 0 with an equal score: suppressed
                      [5, 0, 15, 10],     # 4: IoU 1/3 with 0: kept
                      [20, 0, 30, 10]],   # 5: below the score threshold
                     np.float32)
    scores = np.array([0.9, 0.8, 0.7, 0.9, 0.6, 0.4], np.float32)
    np.testing.assert_allclose(iou(boxes[0], boxes[[1, 3, 4, 5]]), [81 / 119, 1, 1 / 3, 0])
    assert nms(boxes, scores).tolist() == [0, 2, 4]
    assert nms(boxes, scores, keep=2).tolist() == [0, 2]
    assert nms(boxes, scores, iou_threshold=0.7).tolist() == [0, 1, 2, 4]
    assert nms(boxes, np.zeros(6, np.float32)).tolist() == []


def test_stage1_proposes_duplicates_that_nms_suppresses(server_binary, tmp_path_factory, client,
                                                        protocol):
    """detector_stage1 served on its own (no meta, so not internal): every anchor whose window
    holds a whole square proposes that square's box, so each square has several proposals above
    the threshold; the meta keeps one per square."""
    repo = tmp_path_factory.mktemp("stage1_repo")
    shutil.copytree(os.path.join(HOOKS_REPO, "detector_stage1"), repo / "detector_stage1")
    image, boxes, scores, _ = two_squares()
    log = tmp_path_factory.mktemp("stage1") / "server.log"
    with rx.Server(str(repo), binary=server_binary, log_path=str(log)) as s:
        c = httpclient.InferenceServerClient(s.http_url)
        x = httpclient.InferInput("image", [1, 32, 32, 1], "FP32")
        x.set_data_from_numpy(image[None])
        r = c.infer("detector_stage1", [x])
        proposals = {n: r.as_numpy(n)[0] for n in ("boxes", "scores")}
        assert r.as_numpy("features").shape == (1, 8, 8, 7)
    above = np.nonzero(proposals["scores"] >= 0.5)[0]
    for box in boxes:
        same = [a for a in above if np.abs(proposals["boxes"][a] - box).max() <= BOX_ATOL]
        assert len(same) >= 2, (box, above)
    assert above.tolist() == [8, 9, 10, 17, 37, 45]  # 4 of the small square, 2 of the large
    kept = meta_code()["nms"](proposals["boxes"], proposals["scores"])
    got = infer(client, protocol, "detector", image[None])
    np.testing.assert_array_equal(got["boxes"][0, :2], proposals["boxes"][kept])
    np.testing.assert_array_equal(got["scores"][0, :2], proposals["scores"][kept])


def index_of(client, protocol):
    if protocol == "http":
        return {m["name"]: m.get("state", "") for m in client.get_model_repository_index()}
    return {m.name: m.state for m in client.get_model_repository_index().models}


def test_the_stages_are_internal_to_the_meta(client, protocol):
    assert index_of(client, protocol) == {"detector": "READY"}
    image = two_squares()[0][None]
    for stage in ("detector_stage1", "detector_stage2"):
        with pytest.raises(InferenceServerException) as e:
            infer(client, protocol, stage, image)
        assert e.value.status() == ("404" if protocol == "http" else "StatusCode.NOT_FOUND")
        assert (f"model '{stage}' is internal to meta model 'detector' and is not served "
                "directly") in e.value.message()


def test_metadata_reports_the_detections(client, protocol):
    md = client.get_model_metadata("detector")
    want_in = [("image", "FP32", [-1, 32, 32, 1])]
    want_out = [("boxes", "FP32", [-1, K, 4]), ("scores", "FP32", [-1, K]),
                ("classes", "INT64", [-1, K]), ("count", "INT32", [-1])]
    if protocol == "http":
        got_in = [(t["name"], t["datatype"], t["shape"]) for t in md["inputs"]]
        got_out = [(t["name"], t["datatype"], t["shape"]) for t in md["outputs"]]
    else:
        got_in = [(t.name, t.datatype, list(t.shape)) for t in md.inputs]
        got_out = [(t.name, t.datatype, list(t.shape)) for t in md.outputs]
    assert (got_in, got_out) == (want_in, want_out)


def test_regulated_profile_loads_the_detector(server_binary, tmp_path_factory):
    """The run is a function of its input: the regulated warm-up (run twice on zeros, its calls
    served by both stages) gives identical results and the meta loads."""
    repo = tmp_path_factory.mktemp("regulated_repo")
    for name in BUNDLES:
        shutil.copytree(os.path.join(HOOKS_REPO, name), repo / name)
    log = tmp_path_factory.mktemp("regulated") / "server.log"
    with rx.Server(str(repo), binary=server_binary, log_path=str(log),
                   settings={"runtime": {"profile": "regulated"}}) as s:
        c = httpclient.InferenceServerClient(s.http_url)
        assert c.is_model_ready("detector")
        text = s.log()
    assert "hook warm-up identical dir=" + str(repo / "detector") + " stage=run" in text
