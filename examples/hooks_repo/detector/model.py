# detector: a two-stage meta model (docs/hooks.md "A two-stage detector"). run calls
# detector_stage1 for 64 anchor proposals per image, keeps at most K of them with greedy NMS
# here in numpy, ROI-pools each kept box's crop of the image, and calls detector_stage2 for the
# kept boxes' classes. Both sub-models are listed in meta.calls, so clients do not see them.
#
# Per image the answer holds the kept boxes in order of score (ties in anchor order), then
# zeros up to K: boxes (x0, y0, x1, y1) in pixels, their objectness scores, their classes
# (0 small, 1 large, 2 dim; -1 in a padding slot) and count, the number of kept boxes.
import numpy as np

K = 4                  # boxes per image (stage 2 is compiled for this many)
BINS = 4               # ROI pooling grid per box
SCORE_THRESHOLD = 0.5  # proposals below it are dropped before NMS
IOU_THRESHOLD = 0.5    # a proposal overlapping a kept box by more is suppressed
CLASS_NAMES = ["small", "large", "dim"]


def area(b):
    """The area of boxes [..., 4] (x0, y0, x1, y1), 0 for an empty one."""
    return np.clip(b[..., 2] - b[..., 0], 0, None) * np.clip(b[..., 3] - b[..., 1], 0, None)


def iou(box, boxes):
    """Intersection over union of one box [4] with each of boxes [m, 4] (x0, y0, x1, y1)."""
    ix0 = np.maximum(box[0], boxes[:, 0])
    iy0 = np.maximum(box[1], boxes[:, 1])
    ix1 = np.minimum(box[2], boxes[:, 2])
    iy1 = np.minimum(box[3], boxes[:, 3])
    inter = np.clip(ix1 - ix0, 0, None) * np.clip(iy1 - iy0, 0, None)
    union = area(box) + area(boxes) - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0)


def nms(boxes, scores, score_threshold=SCORE_THRESHOLD, iou_threshold=IOU_THRESHOLD, keep=K):
    """Greedy NMS: the indices of at most `keep` boxes, best score first (a stable sort, so
    equal scores keep their anchor order), each overlapping no better kept box by more than
    iou_threshold, all scoring at least score_threshold."""
    order = np.argsort(-scores, kind="stable")
    order = order[scores[order] >= score_threshold]
    kept = []
    while order.size and len(kept) < keep:
        best, order = order[0], order[1:]
        kept.append(int(best))
        order = order[iou(boxes[best], boxes[order]) <= iou_threshold]
    return np.array(kept, np.int64)


def roi_pool(image, box):
    """The mean of image [h, w] over each of BINS x BINS bins of box, [BINS, BINS]: bin edges
    rounded outwards to whole pixels (an edge within 1e-4 of a whole pixel is that pixel), at
    least one pixel each, clipped to the image."""
    h, w = image.shape
    x0, y0, x1, y1 = (float(v) for v in box)
    out = np.zeros((BINS, BINS), np.float32)
    for by in range(BINS):
        r0 = int(np.clip(np.floor(y0 + (y1 - y0) * by / BINS + 1e-4), 0, h - 1))
        r1 = int(np.clip(np.ceil(y0 + (y1 - y0) * (by + 1) / BINS - 1e-4), r0 + 1, h))
        for bx in range(BINS):
            c0 = int(np.clip(np.floor(x0 + (x1 - x0) * bx / BINS + 1e-4), 0, w - 1))
            c1 = int(np.clip(np.ceil(x0 + (x1 - x0) * (bx + 1) / BINS - 1e-4), c0 + 1, w))
            out[by, bx] = image[r0:r1, c0:c1].mean()
    return out


def run(inputs, call):
    image = inputs["image"]                      # f32 [n, 32, 32, 1]
    n = image.shape[0]
    proposals = call("detector_stage1", {"image": image})
    boxes = np.zeros((n, K, 4), np.float32)
    scores = np.zeros((n, K), np.float32)
    count = np.zeros(n, np.int32)
    crops = np.zeros((n, K, BINS, BINS), np.float32)
    for i in range(n):
        kept = nms(proposals["boxes"][i], proposals["scores"][i])
        count[i] = kept.size
        boxes[i, :kept.size] = proposals["boxes"][i][kept]
        scores[i, :kept.size] = proposals["scores"][i][kept]
        for k in range(kept.size):
            crops[i, k] = roi_pool(image[i, :, :, 0], boxes[i, k])
    sizes = np.stack([boxes[..., 2] - boxes[..., 0], boxes[..., 3] - boxes[..., 1]], -1)
    probs = call("detector_stage2", {"crops": crops, "sizes": sizes})["probs"]
    valid = np.arange(K)[None, :] < count[:, None]
    classes = np.where(valid, probs.argmax(axis=-1), -1).astype(np.int64)
    return {"boxes": boxes, "scores": scores, "classes": classes, "count": count}


register_meta_model("detector", run=run)
