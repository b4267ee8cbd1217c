# SPDX-License-Identifier: GPL-2.0
"""Stream failure modes: a stream that goes on after a failed task
(DAVINCI_STREAM_F_CONTINUE, CANN's default ACL_CONTINUE_ON_FAILURE) and one
that stops (the device's default, ACL_STOP_ON_FAILURE): on the device,
through davinci.Stream, and through pyACL (acl.rt, acl.media, acl.mdl) in
the shape of the samples' loops that log a bad image and go on."""

import errno

import numpy as np
import pytest

import acl
import davinci
from davinci import _uapi, atc

from ._onnx_models import mlp
from .test_acl_mdl import Run, _write
from .test_dvpp_jpegd import _bad_files, encode, photo

NV12 = 1
AICPU = acl.constants.ACL_ERROR_RT_AICPU_EXCEPTION


def _bad_memset(s, b):
    """A memset of memory that is not ours: fails INVALID_ADDRESS."""
    return s.memset(b.dev_addr + 4096 * 1000, 0, 16)


@pytest.mark.parametrize("polled", [False, True], ids=["doorbell", "polled"])
def test_continue_stream_runs_the_tasks_after_a_failure(dev, polled):
    if polled and not dev.version.has(_uapi.DAVINCI_FEAT_SQ_POLL):
        pytest.skip("no polled rings")
    assert dev.version.has(_uapi.DAVINCI_FEAT_STREAM_CONTINUE)
    s = dev.stream(polled=polled, continue_on_failure=True)
    with dev.malloc(4096) as b:
        s.memset(b, 1)
        bad = _bad_memset(s, b)
        after = s.memset(b, 2)
        with pytest.raises(davinci.TaskFailedError) as ei:
            s.synchronize()
        e = ei.value
        assert e.seq == bad and e.status == _uapi.DAVINCI_STATUS_INVALID_ADDRESS
        assert "went on" in str(e)
        # the device went on: the task after it ran, nothing aborted
        assert s.completion(after).ok
        assert (b.numpy() == 2).all()
        assert s.task(bad).status == _uapi.DAVINCI_STATUS_INVALID_ADDRESS
        st = s.query()
        assert not st.error and st.error_status == 0
        # raised once: the next synchronize is clean, later work runs
        s.synchronize()
        s.memset(b, 3, sync=True)
        assert (b.numpy() == 3).all()
        # a second failure is raised once again, the first of a batch
        first = _bad_memset(s, b)
        _bad_memset(s, b)
        s.memset(b, 4)
        with pytest.raises(davinci.TaskFailedError) as ei:
            s.synchronize()
        assert ei.value.seq == first
        s.synchronize()
        assert (b.numpy() == 4).all()
    s.destroy()


def test_default_stream_stops_after_a_failure(dev):
    """Without the flag nothing changed: the tasks behind a failure are
    ABORTED, and so is new work until reset()."""
    s = dev.stream()
    assert not s.continue_on_failure
    with dev.malloc(4096) as b:
        s.memset(b, 1)
        bad = _bad_memset(s, b)
        after = s.memset(b, 2)
        for _ in range(2):
            with pytest.raises(davinci.TaskFailedError) as ei:
                s.synchronize()
            assert ei.value.seq == bad
        assert s.completion(after).status == _uapi.DAVINCI_STATUS_ABORTED
        assert (b.numpy() == 1).all()
        assert s.query().error
        s.reset()
        s.memset(b, 3, sync=True)
        assert (b.numpy() == 3).all()
    s.destroy()


def test_the_mode_of_a_live_stream_switches(dev):
    s = dev.stream()
    with dev.malloc(4096) as b:
        s.set_continue_on_failure(True)
        assert s.continue_on_failure
        _bad_memset(s, b)
        after = s.memset(b, 5)
        with pytest.raises(davinci.TaskFailedError):
            s.synchronize()
        assert s.completion(after).ok and (b.numpy() == 5).all()
        s.set_continue_on_failure(False)
        bad = _bad_memset(s, b)
        after = s.memset(b, 6)
        with pytest.raises(davinci.TaskFailedError) as ei:
            s.synchronize()
        assert ei.value.seq == bad and s.query().error
        assert s.completion(after).status == _uapi.DAVINCI_STATUS_ABORTED
        # switched back on, the stream stays stopped until the reset
        s.set_continue_on_failure(True)
        aborted = s.memset(b, 7)
        with pytest.raises(davinci.TaskFailedError):
            s.synchronize()
        assert s.completion(aborted).status == _uapi.DAVINCI_STATUS_ABORTED
        s.reset()
        _bad_memset(s, b)
        s.memset(b, 8)
        with pytest.raises(davinci.TaskFailedError):
            s.synchronize()
        assert (b.numpy() == 8).all()
    s.destroy()


def test_set_flags_refuses_other_bits(dev):
    s = dev.stream()
    t = dev.transport
    for flags in (_uapi.DAVINCI_STREAM_F_POLLED, 1 << 31):
        err = t.try_ioctl(_uapi.DAVINCI_IOCTL_STREAM_SET_FLAGS,
                          _uapi.davinci_stream_flags(stream_id=s.stream_id,
                                                     flags=flags))
        assert err == errno.EINVAL
    err = t.try_ioctl(_uapi.DAVINCI_IOCTL_STREAM_SET_FLAGS,
                      _uapi.davinci_stream_flags(stream_id=99999, flags=0))
    assert err == errno.ENOENT
    s.destroy()


def test_wait_raises_a_failure_at_or_before_its_task(dev):
    s = dev.stream(continue_on_failure=True)
    with dev.malloc(4096) as b:
        good = s.memset(b, 1)
        bad = _bad_memset(s, b)
        s.wait(good)        # the failure after it is not raised here
        with pytest.raises(davinci.TaskFailedError) as ei:
            s.wait(bad)
        assert ei.value.seq == bad
        s.wait()
    s.destroy()


def test_a_graph_on_a_continue_stream_goes_on(dev):
    s = dev.stream(continue_on_failure=True)
    with dev.malloc(4096) as a, dev.malloc(4096) as b:
        with s.capture() as g:
            s.memset(a, 9)
            _bad_memset(s, a)
            s.memcpy(b, a)
        for _ in range(2):
            b.numpy()[:] = 0
            first, last = g.launch(s)
            with pytest.raises(davinci.TaskFailedError) as ei:
                s.synchronize()
            assert ei.value.seq == first + 1
            assert (b.numpy() == 9).all()
            assert s.task(last).status == _uapi.DAVINCI_STATUS_OK
        s.synchronize()
    s.destroy()


def test_device_synchronize_raises_a_continue_stream_failure_once(dev):
    s = dev.stream(continue_on_failure=True)
    with dev.malloc(4096) as b:
        _bad_memset(s, b)
        s.memset(b, 3)
        with pytest.raises(davinci.TaskFailedError):
            dev.synchronize()
        dev.synchronize()
        assert (b.numpy() == 3).all()
    s.destroy()


# -- pyACL ---------------------------------------------------------------------

def test_set_stream_failure_mode_checks(acl_dev):
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    assert acl.rt.set_stream_failure_mode(stream, 7) == \
        acl.ACL_ERROR_INVALID_PARAM
    assert acl.rt.set_stream_failure_mode(
        stream, acl.ACL_STOP_ON_FAILURE) == 0
    # CANN sets it once per stream
    assert acl.rt.set_stream_failure_mode(
        stream, acl.ACL_CONTINUE_ON_FAILURE) == acl.ACL_ERROR_INVALID_PARAM
    assert acl.rt.set_stream_failure_mode(0x5A5A5A5A, 0) != 0
    assert acl.rt.destroy_stream(stream) == 0
    assert acl.rt.set_stream_failure_mode(stream, 0) != 0


class _Decoder:
    """The samples' JPEGD loop: a channel, a stream, one desc per file."""

    def __init__(self, mode=None):
        m = acl.media
        self.ch = m.dvpp_create_channel_desc()
        assert m.dvpp_create_channel(self.ch) == 0
        self.stream, ret = acl.rt.create_stream()
        assert ret == 0
        if mode is not None:
            assert acl.rt.set_stream_failure_mode(self.stream, mode) == 0
        self.bufs = []

    def decode_async(self, data, size):
        m = acl.media
        src, _ = m.dvpp_malloc(len(data))
        dst, _ = m.dvpp_malloc(size)
        assert acl.rt.memcpy(src, len(data), acl.util.bytes_to_ptr(data),
                             len(data), 1) == 0
        d = m.dvpp_create_pic_desc()
        for field, value in (("data", dst), ("size", size), ("format", NV12)):
            assert getattr(m, "dvpp_set_pic_desc_" + field)(d, value) == 0
        assert m.dvpp_jpeg_decode_async(self.ch, src, len(data), d,
                                        self.stream) == 0
        self.bufs += [src, dst]
        return d

    def close(self, descs):
        m = acl.media
        for d in descs:
            assert m.dvpp_destroy_pic_desc(d) == 0
        for b in self.bufs:
            assert m.dvpp_free(b) == 0
        assert acl.rt.destroy_stream(self.stream) == 0
        assert m.dvpp_destroy_channel(self.ch) == 0
        assert m.dvpp_destroy_channel_desc(self.ch) == 0


def test_samples_loop_logs_a_bad_image_and_decodes_the_next(acl_dev):
    """The loop of Ascend's JPEGD samples on a stream of
    acl.rt.create_stream (ACL_CONTINUE_ON_FAILURE, CANN's default): decode,
    synchronize, check; a corrupt file's synchronize returns the error
    and its desc's ret code says why, and the next file on the same
    stream decodes."""
    m = acl.media
    good = encode(photo(96, 64, seed=4), quality=90, subsampling=2)
    size, ret = m.dvpp_jpeg_predict_dec_size(acl.util.bytes_to_ptr(good),
                                             len(good), NV12)
    assert ret == 0
    dec = _Decoder()
    descs, rets = [], []
    for data in (good, _bad_files()["corrupt"], good, _bad_files()[
            "truncated"], good):
        d = dec.decode_async(data, size)
        descs.append(d)
        rets.append((acl.rt.synchronize_stream(dec.stream),
                     m.dvpp_get_pic_desc_ret_code(d),
                     m.dvpp_get_pic_desc_width(d)))
    bad = acl.constants.ACL_ERROR_INVALID_FILE
    assert rets == [(0, 0, 96), (AICPU, bad, 0), (0, 0, 96),
                    (AICPU, bad, 0), (0, 0, 96)]
    # queued behind the bad one without a synchronize in between: it runs
    d1 = dec.decode_async(_bad_files()["corrupt"], size)
    d2 = dec.decode_async(good, size)
    assert acl.rt.synchronize_stream(dec.stream) == AICPU
    assert acl.rt.synchronize_stream(dec.stream) == 0
    assert m.dvpp_get_pic_desc_ret_code(d1) == bad
    assert m.dvpp_get_pic_desc_ret_code(d2) == 0
    dec.close(descs + [d1, d2])


def test_stop_on_failure_stops_the_samples_loop(acl_dev):
    m = acl.media
    good = encode(photo(96, 64, seed=4), quality=90, subsampling=2)
    size, _ = m.dvpp_jpeg_predict_dec_size(acl.util.bytes_to_ptr(good),
                                           len(good), NV12)
    dec = _Decoder(acl.ACL_STOP_ON_FAILURE)
    d0 = dec.decode_async(_bad_files()["corrupt"], size)
    assert acl.rt.synchronize_stream(dec.stream) == AICPU
    d1 = dec.decode_async(good, size)
    assert acl.rt.synchronize_stream(dec.stream) == AICPU
    assert m.dvpp_get_pic_desc_ret_code(d1) == AICPU
    dec.close([d0, d1])


def test_a_model_runs_after_a_failed_decode_on_its_stream(acl_dev, tmp_path):
    m = acl.media
    net, ref = mlp()
    path = _write(tmp_path, atc.convert(net, input_shape="x:8,64"))
    model_id, ret = acl.mdl.load_from_file(path)
    assert ret == 0
    r = Run(model_id)
    good = encode(photo(96, 64, seed=4), quality=90, subsampling=2)
    size, _ = m.dvpp_jpeg_predict_dec_size(acl.util.bytes_to_ptr(good),
                                           len(good), NV12)
    dec = _Decoder()
    x = np.random.default_rng(3).standard_normal((8, 64)).astype(np.float32)
    r.put(0, x)
    d = dec.decode_async(_bad_files()["corrupt"], size)
    assert acl.mdl.execute_async(model_id, r.inputs, r.outputs,
                                 dec.stream) == 0
    assert acl.rt.synchronize_stream(dec.stream) == AICPU
    np.testing.assert_allclose(r.get(0, (8, 10)), ref(x), rtol=1e-5,
                               atol=1e-6)
    # and again, with nothing failing before it
    x2 = -x
    r.put(0, x2)
    assert acl.mdl.execute_async(model_id, r.inputs, r.outputs,
                                 dec.stream) == 0
    assert acl.rt.synchronize_stream(dec.stream) == 0
    np.testing.assert_allclose(r.get(0, (8, 10)), ref(x2), rtol=1e-5,
                               atol=1e-6)
    dec.close([d])
    r.close()
    assert acl.mdl.unload(model_id) == 0
